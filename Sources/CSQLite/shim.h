// sqlite3.h declares the pre-update hook API (sqlite3_preupdate_hook, _old, _new, _count,
// _depth) only "if SQLITE_ENABLE_PREUPDATE_HOOK is defined": the library must have been
// compiled with that option too (https://sqlite.org/c3ref/preupdate_blobwrite.html). Linux's
// libsqlite3 (Debian 3.40.1: `sqlite3 :memory: 'pragma compile_options'` lists
// ENABLE_PREUPDATE_HOOK) has it; Apple's system SQLite does not, so there the declarations stay
// hidden and Store compiles its change collector without them (see ChangeCollector.swift).
#if !defined(__APPLE__) && !defined(SQLITE_ENABLE_PREUPDATE_HOOK)
#define SQLITE_ENABLE_PREUPDATE_HOOK 1
#endif
#include <sqlite3.h>

/// Turns off SQLite's memory statistics, once per process, before SQLite initializes.
///
/// With statistics on (the default), every allocation and free SQLite makes takes one global
/// mutex to keep the totals: "SQLITE_CONFIG_MEMSTATUS ... When memory allocation statistics
/// are disabled, the following SQLite interfaces become non-operational: sqlite3_hard_heap_limit64(),
/// sqlite3_memory_used(), sqlite3_memory_highwater(), sqlite3_soft_heap_limit64(),
/// sqlite3_status64()" (https://sqlite.org/c3ref/c_config_covering_index_scan.html). The store
/// uses none of them, and profiles of a large sync showed that mutex at about 7% of the time.
///
/// sqlite3_config() is variadic, so Swift cannot call it directly. It only works before
/// SQLite is initialized: if the host process already used SQLite, it returns SQLITE_MISUSE
/// and changes nothing, which is harmless.
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// Makes the connection close without a checkpoint: "Usually, when a database in wal mode is
/// closed or detached from a database handle, SQLite checks if this will mean that there are now
/// no connections at all to the database. If so, it performs a checkpoint operation before
/// closing the connection. This option may be used to override this behaviour"
/// (SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, https://sqlite.org/c3ref/c_dbconfig_defensive.html). With
/// no checkpoint, the close does not delete the -wal and -shm either (sqlite3WalClose). Variadic,
/// so Swift cannot call sqlite3_db_config directly.
static inline int csqlite_skip_checkpoint_on_close(sqlite3 *db) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)0);
}
