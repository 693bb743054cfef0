import Foundation

/// Errors of the store that are not SQLite's own (those are `SQLiteError`).
///
/// Each description is one sentence that says what was wrong and where.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// An insert met a record with the same key.
    case recordExists(kind: RecordKind, key: String)
    /// No record has this key.
    case recordNotFound(kind: RecordKind, key: String)
    /// A record failed validation before it was written.
    case invalidRecord(kind: RecordKind, key: String, field: String, reason: String)
    /// A recorded migration's checksum differs from this build's file: it was edited after it was applied, or the
    /// database was made by a development build.
    case migrationModified(migration: String, recorded: String, expected: String)
    /// The database has migrations this build does not know.
    case databaseFromFuture(unknownMigrations: [String])
    /// A migration's SQL failed; the database stays at the previous version.
    case migrationFailed(migration: String, underlying: SQLiteError)
    /// The database file cannot be created or opened.
    case cannotOpen(path: String, reason: String)
    /// The store was closed.
    case closed
    /// Another process held the write lock for longer than the busy timeout.
    case writeLockTimeout(path: String, waited: Duration)
    /// The file is a SQLite database of another application (or not SQLite at all): it was
    /// refused before anything was written to it.
    case notAStore(path: String, reason: String)
    /// The store does not exist, and was opened with `createIfMissing` false.
    case storeNotFound(path: String)
    /// One of the store's files (the database, its -wal or its -shm; `path` names it) was
    /// removed or replaced while the store was open (the path names another file, or none):
    /// every write fails from then on, writing nothing, and a sync under way does not commit.
    /// SQLite's rule is never to remove them while the store is open; reopen the store. (A
    /// write looks at most every 100 ms, so one within 100 ms of the previous look may still
    /// go to the old file; a sync looks before it commits.) When the database was replaced,
    /// ``Store/close()`` removes the old file's -wal and -shm (see there).
    case storeMoved(path: String)
    /// `Store.Configuration` cannot be used (an app's record kind or migrations): nothing was
    /// opened.
    case invalidConfiguration(reason: String)

    public var description: String {
        switch self {
        case .recordExists(let kind, let key):
            "\(kind.article) \(kind) with \(kind.keyField) '\(key)' already exists"
        case .recordNotFound(let kind, let key):
            "no \(kind) with \(kind.keyField) '\(key)'"
        case .invalidRecord(let kind, let key, let field, let reason):
            // No key: a part of a record checked alone (an order's item).
            key.isEmpty ? "\(kind): \(field): \(reason)" : "\(kind) '\(key)': \(field): \(reason)"
        case .migrationModified(let migration, let recorded, let expected):
            "migration \(migration) as applied to this database differs from this build's (recorded checksum "
                + "\(recorded.prefix(12))…, this build's \(expected.prefix(12))…): its file was edited after it was "
                + "applied, or the database was made by a development build; refusing to open the database"
        case .databaseFromFuture(let unknown):
            "the database has migrations this build does not know (\(unknown.joined(separator: ", "))): "
                + "it was written by a newer version; refusing to open it"
        case .migrationFailed(let migration, let underlying):
            "migration \(migration) failed, the database stays at the previous version: \(underlying)"
        case .cannotOpen(let path, let reason):
            "cannot open the database at \(path): \(reason)"
        case .closed:
            "the store is closed"
        case .writeLockTimeout(let path, let waited):
            // SQLite does not say which process holds the lock, nor what it is doing.
            "another process holds the write lock on \(path); waited \(Self.seconds(waited)) s (the busy timeout) for it"
        case .notAStore(let path, let reason):
            "\(path) is not a store: \(reason); refusing to open it (it was left unchanged)"
        case .storeNotFound(let path):
            "the store \(path) does not exist"
        case .storeMoved(let path) where path.hasSuffix("-wal") || path.hasSuffix("-shm"):
            "\(path) was removed or replaced while the store was open (never remove a store's files while it is open; reopen it); nothing was written"
        case .storeMoved(let path):
            // The database itself: a backup restored over it, most likely.
            "the store \(path) was replaced or removed while this process had it open; nothing was written (restore a backup only once the processes that have the store open are stopped; reopen it)"
        case .invalidConfiguration(let reason):
            "the store's configuration cannot be used: \(reason)"
        }
    }

    public var errorDescription: String? { description }

    /// `1`, `0.5`, `60`: a duration in seconds, without trailing zeros.
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return String(seconds) }
        let value = Double(seconds) + Double(attoseconds) / 1e18
        return String(format: "%g", value)
    }
}
