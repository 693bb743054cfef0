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
/// (`Database.close()`). (With only the database replaced, the `-wal` and `-shm` at the path
/// are still this store's: the usual close, which checkpoints into the file it has open and
/// deletes them, is the one that leaves no stale WAL beside the new file.)
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
    /// When a transaction last looked, and the replaced file once one was seen.
    private let state = LockedBox<(lastLook: ContinuousClock.Instant?, replaced: String?)>((nil, nil))
    /// How often a write transaction looks at most.
    static let writeCheckInterval: Duration = .milliseconds(100)

    /// The files at `databasePath` now: taken once the writer has opened the database in WAL
    /// mode (a read or write in WAL mode creates the `-wal` and `-shm`).
    init(databasePath: String) {
        files = [databasePath, databasePath + "-wal", databasePath + "-shm"].map { ($0, FileIdentity(of: $0)) }
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

    /// Whether the `-wal` or the `-shm` is no longer the one opened (looked at now).
    var walOrShmReplaced: Bool { files.dropFirst().contains(where: Self.isReplaced) }

    private static func isReplaced(_ file: (path: String, identity: FileIdentity?)) -> Bool {
        file.identity.map { FileIdentity(of: file.path) != $0 } ?? false
    }
}
