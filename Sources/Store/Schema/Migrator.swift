import Foundation

/// Applies `Migrations/*.sql` in order, records each with its checksum and time, and refuses
/// databases it cannot trust.
///
/// Guarantees:
/// - each migration runs in its own `BEGIN IMMEDIATE` transaction together with its record, so a
///   failing migration leaves the database exactly at the previous version;
/// - the recorded migrations are read again inside that transaction, so two processes migrating
///   one file at once cannot both apply a migration: the second finds it recorded;
/// - before anything is applied, a recorded migration whose checksum differs from this build's
///   file, or one this build does not know, stops everything with a `StoreError`.
struct Migrator: Sendable {
    let migrations: [Migration]
    let now: @Sendable () -> Date

    static let table = "schema_migrations"

    private struct Record {
        let version: Int
        let name: String
        let checksum: String
        let appliedAt: Date?
    }

    /// Applies every pending migration and returns those it applied.
    @discardableResult
    func migrate(_ db: Database) throws -> [Migration] {
        // Usually every migration is already recorded: check that in a read transaction, which
        // in WAL mode takes no write lock, so opening a migrated store neither waits for nor
        // blocks other processes' writers (it used to take the write lock once per migration).
        if !migrations.isEmpty {
            let records = try db.inTransaction(.deferred) { try recorded(db) }
            if migrations.allSatisfy({ migration in records.contains { $0.version == migration.version } }) {
                try verify(records)
                // A store an earlier version made has no application_id yet: claim it once. Not
                // fatal: such a store on a read-only file still opens for reading.
                try? StoreFile.claim(db)
                return []
            }
        }
        try inWriteTransaction(db) {
            try StoreFile.claim(db)
            try db.executeScript("""
                CREATE TABLE IF NOT EXISTS \(Self.table) (
                    version    INTEGER PRIMARY KEY NOT NULL,
                    name       TEXT NOT NULL,
                    checksum   TEXT NOT NULL, -- SHA-256 of the migration file, hex
                    applied_at TEXT NOT NULL  -- RFC 3339, UTC
                )
                """)
        }
        var applied: [Migration] = []
        for migration in migrations {
            let didApply = try inWriteTransaction(db) { () throws -> Bool in
                let records = try recorded(db)
                try verify(records)
                if records.contains(where: { $0.version == migration.version }) { return false }
                do {
                    try db.executeScript(migration.sql)
                } catch let error as SQLiteError {
                    throw StoreError.migrationFailed(migration: migration.identifier, underlying: error)
                }
                try db.execute(
                    "INSERT INTO \(Self.table) (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                    [.integer(Int64(migration.version)), .text(migration.name), .text(migration.checksum),
                     .text(Timestamp.format(now()))])
                return true
            }
            if didApply { applied.append(migration) }
        }
        return applied
    }

    /// `BEGIN IMMEDIATE`, as the writer begins: if the busy handler waited the whole busy
    /// timeout (another process migrating the same new file, or writing), the error says so
    /// as a write's does (`StoreError.writeLockTimeout`), not SQLite's "database is locked".
    private func inWriteTransaction<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        var began = false
        do {
            return try db.inTransaction(.immediate) {
                began = true
                return try body()
            }
        } catch let error as SQLiteError where error.code == SQLiteError.busy && !began {
            throw StoreError.writeLockTimeout(path: db.path, waited: db.busyTimeout)
        }
    }

    /// The migrations `migrate(_:)` would apply; throws as it does for a database holding a
    /// modified or unknown migration. Changes nothing.
    func pending(_ db: Database) throws -> [MigrationStatus] {
        try verify(try recorded(db))
        return try status(db).filter { $0.state == .pending }
    }

    /// The state of every migration, known or recorded; changes nothing.
    func status(_ db: Database) throws -> [MigrationStatus] {
        let records = try recorded(db)
        var statuses = migrations.map { migration -> MigrationStatus in
            guard let record = records.first(where: { $0.version == migration.version }) else {
                return MigrationStatus(version: migration.version, name: migration.name, state: .pending,
                                       checksum: migration.checksum, appliedAt: nil)
            }
            let state: MigrationStatus.State = record.checksum == migration.checksum ? .applied : .modified
            return MigrationStatus(version: migration.version, name: migration.name, state: state,
                                   checksum: record.checksum, appliedAt: record.appliedAt)
        }
        for record in records where !migrations.contains(where: { $0.version == record.version }) {
            statuses.append(MigrationStatus(version: record.version, name: record.name, state: .unknown,
                                            checksum: record.checksum, appliedAt: record.appliedAt))
        }
        return statuses.sorted { $0.version < $1.version }
    }

    private func verify(_ records: [Record]) throws {
        let unknown = records.filter { record in !migrations.contains { $0.version == record.version } }
        if !unknown.isEmpty {
            throw StoreError.databaseFromFuture(
                unknownMigrations: unknown.map { Migration(version: $0.version, name: $0.name, sql: "").identifier })
        }
        for record in records {
            guard let migration = migrations.first(where: { $0.version == record.version }) else { continue }
            if record.checksum != migration.checksum {
                throw StoreError.migrationModified(
                    migration: migration.identifier, recorded: record.checksum, expected: migration.checksum)
            }
        }
    }

    private func recorded(_ db: Database) throws -> [Record] {
        let exists = try db.fetchOne(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(Self.table)]) != nil
        guard exists else { return [] }
        return try db.query("SELECT version, name, checksum, applied_at FROM \(Self.table) ORDER BY version") {
            Record(version: $0.int(0), name: $0.text(1), checksum: $0.text(2), appliedAt: Timestamp.parse($0.text(3)))
        }
    }
}
