// A test-only SQLite VFS that simulates power loss (issue 15 part 4). Only the tests link it.
//
// It wraps the default VFS and writes through to the real files, remembering for each write
// not yet synced the bytes it overwrote (and the file's size before it). At the chosen I/O
// (a count of xWrite and xSync calls) it "cuts the power": the unsynced writes are undone
// (all of them, a seeded random subset, or the last one torn at a 512-byte sector boundary of
// the file), and from then on every read, write, sync, truncate, delete and open fails with
// SQLITE_IOERR. An xTruncate is pending like a write until the file's next sync (a checkpoint
// truncates the database before it syncs it): a cut restores the bytes it cut off, or keeps
// the truncation, as for a write. xDelete is treated as durable at once, and so are the
// directory entries of created files (the unix VFS syncs directories on its own).
#ifndef POWERLOSS_VFS_H
#define POWERLOSS_VFS_H
#include <stdint.h>

enum { POWERLOSS_DROP_ALL = 0, POWERLOSS_DROP_RANDOM = 1, POWERLOSS_TEAR_LAST = 2 };
/// SQLITE_IOCAP_POWERSAFE_OVERWRITE, for `powerloss_set_device_characteristics`.
enum { POWERLOSS_POWERSAFE_OVERWRITE = 0x00001000 };

/// Registers the VFS under `name` (once per process); returns an SQLite result code.
int powerloss_register(const char *name);
/// Power restored: no cut armed, counters zero, nothing remembered.
void powerloss_reset(void);
/// Cuts the power at I/O number `at` (1-based; 0 = never), undoing unsynced writes as `mode`
/// says, with `seed` choosing the random subset or the tear.
void powerloss_arm(int64_t at, int mode, uint64_t seed);
/// The I/Os (writes and syncs) counted since the last reset.
int64_t powerloss_io_count(void);
/// 1 once the power has been cut.
int powerloss_did_cut(void);
/// Writes dropped (wholly or partly) by the last cut.
int64_t powerloss_dropped_writes(void);
/// What files opened from now on report to SQLite as their device's characteristics
/// (SQLITE_IOCAP_*): 0 (the default, a plain disk: SQLite pads a synced WAL commit to a
/// sector) or SQLITE_IOCAP_POWERSAFE_OVERWRITE (what the unix VFS reports by default, so what
/// a store gets in production: no padding).
void powerloss_set_device_characteristics(int characteristics);

#endif
