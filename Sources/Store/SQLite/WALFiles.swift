import Foundation

/// A database's files in WAL mode (the database, its `-wal`, its `-shm`) as a store opened them,
/// by identity (device and inode), so that the store can tell when one was removed or replaced
/// under it (`rm`, a restore from a backup, a careless cleanup of "temporary" files).
///
/// SQLite's rule is never to delete them while the database is open: a connection keeps
/// writing to the file it has open, while others create new ones at the path. Its close then
/// did the harm: the last connection to close checkpoints its WAL into the database and deletes
/// the `-wal` and `-shm` *by name* (those of the other processes, with their confirmed writes).
/// A connection whose `-wal` or `-shm` was replaced therefore closes without a checkpoint
/// (`Database.close()`), and a sync does not commit if any of the three was (`Store.sync`).
/// (With only the database replaced, the `-wal` and `-shm` at the path are still this
/// store's: the usual close, which checkpoints into the file it has open and deletes them, is
/// the one that leaves no stale WAL beside the new file.)
final class WALFiles: Sendable {
    /// Each file's path and the identity it had when the store opened (nil if it did not exist).
    private let files: [(path: String, identity: FileIdentity?)]

    /// The files at `databasePath` now: taken once the writer has opened the database in WAL
    /// mode (a read or write in WAL mode creates the `-wal` and `-shm`).
    init(databasePath: String) {
        files = [databasePath, databasePath + "-wal", databasePath + "-shm"].map { ($0, FileIdentity(of: $0)) }
    }

    /// The first file that is no longer the one opened (removed, or another file at its path),
    /// or nil. A file that did not exist at open is not compared.
    func replacedFile() -> String? {
        files.first(where: Self.isReplaced)?.path
    }

    /// Whether the `-wal` or the `-shm` is no longer the one opened.
    var walOrShmReplaced: Bool { files.dropFirst().contains(where: Self.isReplaced) }

    private static func isReplaced(_ file: (path: String, identity: FileIdentity?)) -> Bool {
        file.identity.map { FileIdentity(of: file.path) != $0 } ?? false
    }
}
