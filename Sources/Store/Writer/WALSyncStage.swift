internal import CSQLite
import Foundation

/// Makes the writer's commits durable after the writer has moved on: the sync stage of group
/// commit under durability `.full` (see `DatabaseWriter`).
///
/// The writer connection then runs `synchronous = NORMAL`: its COMMIT writes the WAL without
/// syncing it, and SQLite still keeps the file consistent ("WAL mode is always consistent with
/// synchronous=NORMAL", https://sqlite.org/pragma.html#pragma_synchronous) and syncs the WAL
/// before each checkpoint ("the WAL file is synced before each checkpoint and the database file
/// is synced after each completed checkpoint", same page). Right after a COMMIT the writer hands
/// the callers of the batch to this stage and goes on with the next queued writes; the stage
/// syncs the WAL through SQLite's own file object (so a test VFS sees the sync) and only then
/// answers them. A sync makes durable everything written to the file before it started (fsync
/// is per file, not per descriptor), so one sync answers every commit handed over before it
/// began, in commit order. Syncs run on the stage's own threads, never on the writer's queue
/// or Swift's cooperative pool; at most `maximumConcurrentSyncs` at a time.
///
/// A failed sync answers the callers it covered with the error (their writes are committed
/// and visible, and may or may not survive a power cut), and every later commit too: after a
/// failed fsync the kernel may have dropped the unwritten pages, and the WAL's frames chain
/// their checksums, so no later frame can be promised durable either. The writer then refuses
/// new writes with that error (`failure`) until the store is reopened.
///
/// Why calling `xSync` on another thread than the writer's is safe with SQLite's unix VFS
/// (src/os_unix.c, `unixSync`): it reads the file descriptor (fixed while the file is open),
/// calls fsync/fdatasync (F_FULLFSYNC on Apple), and touches the `unixFile` in two places only:
/// `lastErrno` when the fsync fails (an int that only error messages read), and the
/// `UNIXFILE_DIRSYNC` bit of `ctrlFlags`, which it clears after syncing the directory, once, on
/// the first sync after SQLite created the file. `DatabaseWriter` does that first sync itself on
/// its own thread before handing the file to the stage (see `prepare`), so the stage only ever
/// reads `ctrlFlags`. The writer meanwhile appends frames (`pwrite`) through the same object,
/// which never writes those fields except `lastErrno` on an error. A WAL restart (the writer
/// writing from the start of the file again) happens only after a checkpoint copied every
/// frame into the database, and under NORMAL that checkpoint synced the WAL before and the
/// database after (wal.c, `walCheckpoint`): a commit whose sync is still pending is then
/// already durable in the database file, so a later sync of the restarted WAL loses nothing.
final class WALSyncStage: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every stored var is read and written only while `lock` is
    // held. `file` is a pointer to SQLite's WAL file object, valid while the writer's connection
    // is open: the writer waits (`waitUntilIdle`) for every sync before it closes the
    // connection, and calling `xSync` on it from the stage's threads is safe (see above). The
    // writes handed over are not Sendable, but each changes hands once: the writer gives them
    // up in `committed`, and each is answered exactly once, by whichever sync covers it first,
    // after being removed from `pending` under the lock.
    private let lock = NSCondition()
    private let queue = DispatchQueue(label: "store.writer.sync", qos: .userInitiated, attributes: .concurrent)
    private let file: UnsafeMutablePointer<sqlite3_file>
    private let flags: Int32
    private let walPath: String
    private let maximumConcurrentSyncs: Int
    /// Committed, not yet answered, in commit order, each with its commit's number.
    private var pending: [(commit: Int, write: any PendingWrite)] = []
    private var lastCommit = 0
    /// The last commit a sync under way or finished covers (it started after that commit).
    private var lastCovered = 0
    private var running = 0
    private var failureError: (any Error)?

    /// Makes the writer connection's commits skip their sync and returns the stage that syncs
    /// them instead; nil (the connection left at `synchronous = FULL`) when that cannot be done
    /// safely: no WAL file object, or a device without powersafe overwrite (SQLite pads a FULL
    /// commit to a sector boundary there, so that the next commit's frames cannot damage a
    /// synced one; a NORMAL commit is not padded). Runs on the writer's thread, before any
    /// batch, after the migrations (which thus commit under FULL).
    /// Only a connection at `synchronous = FULL` is taken over (a test's broken variant that
    /// set OFF stays OFF).
    static func prepare(_ database: Database, maximumConcurrentSyncs: Int) throws -> WALSyncStage? {
        // FULL is 2 (https://sqlite.org/pragma.html#pragma_synchronous).
        guard try database.query("PRAGMA synchronous", []) { $0.int(0) } == [2] else { return nil }
        try database.executeScript("PRAGMA synchronous = NORMAL")
        var pointer: UnsafeMutableRawPointer?
        // "SQLITE_FCNTL_JOURNAL_POINTER ... is used to obtain a pointer to the sqlite3_file
        // object of the rollback journal or WAL file" (https://sqlite.org/c3ref/c_fcntl_begin_atomic_write.html).
        let rc = sqlite3_file_control(database.handle, "main", SQLITE_FCNTL_JOURNAL_POINTER, &pointer)
        guard rc == SQLITE_OK, let file = pointer?.assumingMemoryBound(to: sqlite3_file.self),
            let methods = file.pointee.pMethods, let xSync = methods.pointee.xSync,
            let characteristics = methods.pointee.xDeviceCharacteristics,
            characteristics(file) & SQLITE_IOCAP_POWERSAFE_OVERWRITE != 0
        else {
            try database.executeScript("PRAGMA synchronous = FULL")
            return nil
        }
        #if canImport(Darwin)
            let flags = SQLITE_SYNC_FULL // F_FULLFSYNC, as `fullfsync = ON` asks of SQLite's own syncs
        #else
            let flags = SQLITE_SYNC_NORMAL
        #endif
        // The first sync, here on the writer's thread: it clears the file's directory-sync flag
        // (the only field of the file object a sync writes, see above).
        let first = xSync(file, flags)
        if first != SQLITE_OK {
            try database.executeScript("PRAGMA synchronous = FULL")
            throw SQLiteError(extendedCode: first, message: "could not sync the write-ahead log of \(database.path)")
        }
        return WALSyncStage(
            file: file, flags: flags, walPath: database.path + "-wal", maximumConcurrentSyncs: maximumConcurrentSyncs)
    }

    private init(file: UnsafeMutablePointer<sqlite3_file>, flags: Int32, walPath: String, maximumConcurrentSyncs: Int) {
        self.file = file
        self.flags = flags
        self.walPath = walPath
        self.maximumConcurrentSyncs = max(1, maximumConcurrentSyncs)
    }

    /// The error of a failed sync, after which nothing more can be promised durable.
    var failure: (any Error)? { lock.withLock { failureError } }

    /// Whether callers are waiting for a sync (the writer's batches come from them).
    var hasPending: Bool { lock.withLock { !pending.isEmpty } }

    /// Takes the callers of a transaction that just committed, in commit order; each is
    /// answered once a sync that started after this call has succeeded.
    func committed(_ writes: [any PendingWrite]) {
        guard !writes.isEmpty else { return }
        let startsSync: Bool = lock.withLock {
            lastCommit += 1
            for write in writes { pending.append((lastCommit, write)) }
            guard running < maximumConcurrentSyncs else { return false }
            running += 1
            return true
        }
        if startsSync { queue.async { self.runSyncs() } }
    }

    /// Waits until every write handed over is answered (before the connection closes).
    func waitUntilIdle() {
        lock.withLock {
            while running > 0 || !pending.isEmpty { lock.wait() }
        }
    }

    /// One of the stage's sync loops: syncs while commits wait for one not yet under way.
    private func runSyncs() {
        while true {
            let covers: Int? = lock.withLock {
                if lastCovered == lastCommit {
                    running -= 1
                    lock.broadcast()
                    return nil
                }
                lastCovered = lastCommit
                return lastCommit
            }
            guard let covers else { return }
            let error = lock.withLock { failureError } ?? sync()
            let answered: [any PendingWrite] = lock.withLock {
                if let error, failureError == nil { failureError = error }
                // A failure answers everything handed over (see the type's comment); a success
                // the commits up to the one it covers (a sync still under way may cover fewer).
                let end = failureError != nil ? pending.count : (pending.firstIndex { $0.commit > covers } ?? pending.count)
                defer { pending.removeFirst(end) }
                return pending.prefix(end).map(\.write)
            }
            let outcome = lock.withLock { failureError }
            for write in answered { write.finish(outcome) }
        }
    }

    /// Syncs the WAL on the calling thread (the writer's, after an `exclusive` body committed
    /// outside the batches); throws a failed sync's error, which also fails every later commit.
    func syncNow() throws {
        if let failure { throw failure }
        guard let error = sync() else { return }
        lock.withLock { if failureError == nil { failureError = error } }
        throw error
    }

    private func sync() -> (any Error)? {
        let rc = file.pointee.pMethods.pointee.xSync(file, flags)
        if rc == SQLITE_OK { return nil }
        return SQLiteError(extendedCode: rc, message: "disk I/O error: could not sync the write-ahead log \(walPath)")
    }
}
