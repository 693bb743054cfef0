import Foundation

/// A database's files in WAL mode (the database, its `-wal`, its `-shm`) as a store opened them,
/// by identity (device and inode), so that the store can tell when one was removed or replaced
/// under it (`rm`, a restore from a backup, a careless cleanup of "temporary" files).
///
/// SQLite's rule is never to delete them while the database is open: a connection keeps
/// writing to the file it has open, and through its WAL index, while others create new ones
/// at the path. Its next commit then wrote over the other processes' confirmed frames, and its
/// close (the last on its own `-shm`) checkpointed its stale WAL into the database and deleted
/// the other processes' `-wal` and `-shm` *by name*. So a write transaction fails once one of
/// them was replaced (`DatabaseWriter.begin`), a sync does not commit (`Store.sync`), and a
/// connection whose `-wal` or `-shm` was replaced closes without a checkpoint
/// (`Database.close()`).
///
/// With only the database replaced (a backup restored by `mv backup store.sqlite`, or `rm` then
/// `cp`), the `-wal` and `-shm` at the path are still this store's, and hold the old file's
/// frames: SQLite's last close neither checkpoints nor deletes them when "the database file has
/// moved" (pager.c, `databaseIsUnmoved`), and the next process to open the path read the old
/// file's committed transactions into the restored one (its identity and frameworks, the old
/// file's events; `integrity_check` said ok). So the store removes them itself once its last
/// connection closed, unless another process or another store of this process may still use
/// them (`removeOrphanedWALFiles`).
///
/// Looking costs a `stat` per file, and on this project's virtual disk a `stat` of the WAL
/// between two of its syncs made the next sync 40 to 60 µs dearer (a C loop of write, fdatasync
/// and stat; the store's one-write-per-transaction benchmark under `.full` went from about 220
/// to 275 µs a write). Transactions therefore look at most every `writeCheckInterval`; a sync
/// looks before it commits, and a close before it closes. Once a replaced file is seen, it is
/// remembered: every later look says so without looking.
final class WALFiles: Sendable {
    /// Each file's path and the identity it had when the store opened (nil if it did not exist).
    private let files: [(path: String, identity: FileIdentity?)]
    /// The file the `-wal` and `-shm` belong to, by SQLite's name for it: the database's own
    /// entry in `files`, unless the store was opened through a symbolic link.
    private let walOwner: (path: String, identity: FileIdentity?)
    /// When a transaction last looked, and the replaced file once one was seen.
    private let state = LockedBox<(lastLook: ContinuousClock.Instant?, replaced: String?)>((nil, nil))
    /// How often a write transaction looks at most.
    static let writeCheckInterval: Duration = .milliseconds(100)

    /// The files at `databasePath` now: taken once the writer has opened the database in WAL
    /// mode (a read or write in WAL mode creates the `-wal` and `-shm`).
    ///
    /// `sqlitePath`: the database's name as SQLite resolved it (`Database.fileName`), after
    /// which it names the `-wal` and `-shm`. SQLite's unix VFS follows a symbolic link to the
    /// database: the store opened through `link.sqlite` has its `-wal` beside the file the link
    /// names. Looked for beside the link, they were never found, so a store opened through a
    /// link neither saw them deleted under it nor removed the old ones after a restore (the
    /// next opener replayed the old store into the backup). The database itself is looked at
    /// by the path it was opened by: the file that path names is the store. But the old `-wal`
    /// and `-shm` are orphans only once the file SQLite named them after is replaced: with the
    /// link alone replaced, they still belong to the file it named, which may be open elsewhere.
    ///
    /// Where SQLite's name is only another spelling of the same place (a relative path made
    /// absolute, a linked folder resolved: macOS's /tmp and /var), the `-wal` beside
    /// `databasePath` is SQLite's, and the files keep the path's spelling: errors and warnings
    /// named a path the user never typed (/private/var/...).
    init(databasePath: String, sqlitePath: String? = nil) {
        var walBase = databasePath
        if let sqlitePath, !sqlitePath.isEmpty, sqlitePath != databasePath {
            let beside = FileIdentity(of: databasePath + "-wal")
            if beside == nil || beside != FileIdentity(of: sqlitePath + "-wal") { walBase = sqlitePath }
        }
        files = [databasePath, walBase + "-wal", walBase + "-shm"].map { ($0, FileIdentity(of: $0)) }
        walOwner = walBase == databasePath ? files[0] : (walBase, FileIdentity(of: walBase))
    }

    /// The first file that is no longer the one opened (removed, or another file at its path),
    /// or nil. A file that did not exist at open is not compared.
    func replacedFile() -> String? {
        if let replaced = state.withLock({ $0.replaced }) { return replaced }
        guard let replaced = files.first(where: Self.isReplaced)?.path else { return nil }
        state.withLock { $0.replaced = replaced }
        return replaced
    }

    /// `replacedFile()` for a write transaction: it looks only if `writeCheckInterval` has
    /// passed since the last such look (else nil, unless a replaced file was seen before).
    func replacedFileForWrite() -> String? {
        let now = ContinuousClock.now
        let looks = state.withLock { state -> Bool in
            if state.replaced != nil { return true }
            if let last = state.lastLook, now - last < Self.writeCheckInterval { return false }
            state.lastLook = now
            return true
        }
        return looks ? replacedFile() : nil
    }

    /// Whether the database, the `-wal` or the `-shm` is no longer the one opened (looked at now).
    var anyReplaced: Bool { files.contains(where: Self.isReplaced) }

    /// Whether the database file is no longer the one opened (looked at now).
    var databaseReplaced: Bool { Self.isReplaced(files[0]) }

    /// Whether the `-wal` and the `-shm` at the path are still the ones opened (looked at now).
    var walAndShmAreStillOurs: Bool { Self.isStill(files[1]) && Self.isStill(files[2]) }

    private static func isReplaced(_ file: (path: String, identity: FileIdentity?)) -> Bool {
        file.identity.map { FileIdentity(of: file.path) != $0 } ?? false
    }

    /// Whether `file` existed at open and its path still names it.
    private static func isStill(_ file: (path: String, identity: FileIdentity?)) -> Bool {
        file.identity != nil && !isReplaced(file)
    }

    // MARK: The old file's -wal and -shm, after a close

    /// For `Store.close()`, once every connection of the store is closed: if the database at
    /// the path is no longer the file the store opened (removed, or replaced by a restore), the
    /// `-wal` and `-shm` at the path that are still the ones it opened belong to the old file,
    /// and are removed unless something may still use them: another process with them open,
    /// or another store of this process opening the path or with the file now there open.
    /// Returns the files it had to leave because something may be using them (empty otherwise:
    /// nothing was replaced, they were removed, they were no longer the store's, or another
    /// store of this process has the old `-shm` open and removes them as it closes).
    ///
    /// Why: SQLite's close leaves them when the database file has moved, and "since rollback
    /// journals and WAL files are based on the name of the database file, the two different
    /// database files will share the same rollback journal or WAL file. A rollback or recovery
    /// for one of the databases might use content from the other database, resulting in
    /// corruption" (https://sqlite.org/howtocorrupt.html#unlink, "Unlinking or renaming a
    /// database file while in use"). The next opener of the restored file replayed the old
    /// one's committed frames into it.
    ///
    /// Whether another process has them open is asked the way SQLite's unix VFS asks it, by the
    /// `-shm`'s dead-man switch: every connection holds a shared `fcntl` lock on byte
    /// `dmsOffset` of the `-shm` for as long as it has the `-shm` open, and a connection that
    /// opens it takes an exclusive one to learn that it is the first ("if no other process is
    /// holding any lock, then this process is the first to open it. In this case take an
    /// EXCLUSIVE lock on the DMS byte and truncate the *-shm file", os_unix.c,
    /// `unixLockSharedMemory`). So: an exclusive lock on it (`F_SETLK`, not waiting) through a
    /// new descriptor; if another process holds it, the files are left. `fcntl` locks belong
    /// to the process, so the store's own, gone with its connections, do not count; another
    /// store of this process with the old file (and so its `-shm`) open would not be seen by
    /// the lock either; nor would a store of this process that is opening the path right now
    /// (its writer has the new file and the old `-wal` and `-shm` open), or that has the new
    /// file open, perhaps under another name (the backup's, before the `mv`): closing the
    /// descriptors below would drop its connections' locks, and the unlinks would take its WAL
    /// from under it. Those are asked of `OpenDatabaseFiles` (this store released its own entry
    /// first), whose lock is held throughout so that no store starts
    /// opening meanwhile, and the files are left (a connection this process opened to the
    /// file other than through `Store` is not seen at all). While the lock is held the file
    /// now at the path is also locked against readers (SQLite's SHARED bytes), so that a
    /// process opening it at that moment waits (its busy handler) instead of opening the old
    /// `-wal` just before it goes; then the `-wal` is unlinked, then the `-shm`, and the locks
    /// go with the descriptors.
    ///
    /// What it cannot undo: a process that opened the path between the replacement and this
    /// close has read the old frames as part of the new file (and its close, were it the last,
    /// checkpointed them into it). It holds the `-shm`, so the files are left and said to be.
    func removeOrphanedWALFiles() -> [String] {
        let (database, wal, shm) = (walOwner, files[1], files[2])
        guard Self.isReplaced(database) else { return [] }
        return OpenDatabaseFiles.whileLocked { registry in
            // Another store of this process has the old file, and so its -shm, open: its close
            // removes them.
            if registry.isInUse(path: nil, identity: database.identity) { return [] }
            let walIsOurs = Self.isStill(wal)
            guard Self.isStill(shm) else {
                // Without its -shm, who else uses the old -wal cannot be asked.
                return walIsOurs ? [wal.path] : []
            }
            let left = (walIsOurs ? [wal.path] : []) + [shm.path]
            // Another store of this process opening the path, or with the file now there open.
            if registry.isInUse(path: database.path, identity: FileIdentity(of: database.path)) { return left }
            let shmDescriptor = open(shm.path, O_RDWR | O_CLOEXEC)
            guard shmDescriptor >= 0 else { return left }
            defer { close(shmDescriptor) }
            guard FileIdentity(ofDescriptor: shmDescriptor) == shm.identity,
                Self.lock(shmDescriptor, from: Self.dmsOffset, length: 1)
            else { return left }
            var databaseDescriptor: Int32 = -1
            // Parked, not closed, if a store of this process has the file (see `OpenDatabaseFiles`).
            defer { registry.close(databaseDescriptor) }
            if FileIdentity(of: database.path) != nil {
                databaseDescriptor = open(database.path, O_RDWR | O_CLOEXEC | O_NONBLOCK)
                if databaseDescriptor >= 0 {
                    // The file opened, should it have been replaced again since the look above.
                    if registry.isInUse(path: nil, identity: FileIdentity(ofDescriptor: databaseDescriptor)) {
                        return left
                    }
                    // A few tries: a process that has the new file open for longer holds the
                    // -shm too, and was refused above; one opening it right now holds its
                    // SHARED lock a moment.
                    var locked = false
                    for attempt in 0..<5 {
                        if attempt > 0 { usleep(20_000) }
                        if Self.lock(databaseDescriptor, from: Self.sharedFirst, length: Self.sharedSize) {
                            locked = true
                            break
                        }
                    }
                    if !locked { return left }
                }
            }
            if walIsOurs, Self.isStill(wal) { unlink(wal.path) }
            if Self.isStill(shm) { unlink(shm.path) }
            return []
        }
    }

    /// The `-shm`'s dead-man switch byte in SQLite's unix VFS: `UNIX_SHM_DMS`, which is
    /// `UNIX_SHM_BASE + SQLITE_SHM_NLOCK`, `UNIX_SHM_BASE` being `(22 + SQLITE_SHM_NLOCK) * 4`
    /// and `SQLITE_SHM_NLOCK` 8 (os_unix.c, sqlite3.h).
    static let dmsOffset: off_t = (22 + 8) * 4 + 8
    /// The bytes of a database file a reader holds a shared lock on (os_unix.c: `SHARED_FIRST`
    /// is `PENDING_BYTE + 2`, `SHARED_SIZE` 510; `PENDING_BYTE` is 0x40000000 unless changed by
    /// a test-only setting).
    static let sharedFirst: off_t = 0x4000_0000 + 2
    static let sharedSize: off_t = 510

    /// An exclusive `fcntl` lock on `length` bytes from `start`, without waiting.
    private static func lock(_ descriptor: Int32, from start: off_t, length: off_t) -> Bool {
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = start
        lock.l_len = length
        return fcntl(descriptor, F_SETLK, &lock) == 0
    }
}
