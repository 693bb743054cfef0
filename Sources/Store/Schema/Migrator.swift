internal import CSQLite
import Foundation

/// Applies `Migrations/*.sql` (then an app's own migrations, `AppMigrations`) in order, records each with its checksum and time, and refuses
/// databases it cannot trust.
///
/// Guarantees:
/// - every pending migration runs in one `BEGIN IMMEDIATE` transaction, each in its own savepoint
///   together with its record, so a failing migration leaves the database exactly at the
///   previous version: the migrations before it are committed, its own changes rolled back. One
///   commit (one sync of the WAL under `.full`) for a new store's migrations, not one each;
/// - the recorded migrations are read inside that transaction, so two processes migrating one
///   file at once cannot both apply a migration: the second finds it recorded;
/// - before anything is applied, a recorded migration whose checksum differs from this build's
///   file, or one this build does not know, stops everything with a `StoreError`.
struct Migrator: Sendable {
    let migrations: [Migration]
    /// An app's own migrations, applied after the library's and recorded under its namespace.
    var app: AppMigrations? = nil
    let now: @Sendable () -> Date

    static let table = "schema_migrations"
    /// The app migrations' record: `schema_migrations` with a namespace.
    static let appTable = "app_migrations"

    init(migrations: [Migration], app: AppMigrations? = nil, now: @escaping @Sendable () -> Date) {
        self.migrations = migrations
        self.app = app
        self.now = now
    }

    /// The configuration's migrations, the library's and the app's.
    init(_ configuration: Store.Configuration) {
        self.init(migrations: configuration.migrations, app: configuration.appMigrations, now: configuration.clock.now)
    }

    private struct Record {
        let version: Int
        let name: String
        let checksum: String
        let appliedAt: Date?
    }

    /// Where a set of migrations is recorded: the library's table, or the app table under a
    /// namespace.
    private enum Ledger {
        case library
        case app(String)

        func identifier(_ migration: Migration) -> String {
            switch self {
            case .library: migration.identifier
            case .app(let namespace): "\(namespace)/\(migration.identifier)"
            }
        }
    }

    /// Each ledger with the migrations this build knows for it.
    private var ledgers: [(Ledger, [Migration])] {
        [(.library, migrations)] + (app.map { [(.app($0.namespace), $0.migrations)] } ?? [])
    }

    /// Applies every pending migration and returns those it applied.
    @discardableResult
    func migrate(_ db: Database) throws -> [Migration] {
        // Usually every migration is already recorded: check that in a read transaction, which
        // in WAL mode takes no write lock, so opening a migrated store neither waits for nor
        // blocks other processes' writers (it used to take the write lock once per migration).
        if ledgers.contains(where: { !$0.1.isEmpty }) {
            let complete = try db.inTransaction(.deferred) { () throws -> Bool in
                var complete = true
                for (ledger, known) in ledgers {
                    let records = try recorded(db, ledger)
                    if !known.allSatisfy({ migration in records.contains { $0.version == migration.version } }) {
                        complete = false
                    }
                }
                return complete
            }
            if complete {
                try verifyOnly(db)
                // A store an earlier version made has no application_id yet: claim it once. Not
                // fatal: such a store on a read-only file still opens for reading.
                try? StoreFile.claim(db)
                return []
            }
        }
        var applied: [Migration] = []
        var failure: (any Error)?
        try inWriteTransaction(db) {
            try StoreFile.claim(db)
            try db.executeScript(
                """
                CREATE TABLE IF NOT EXISTS \(Self.table) (
                    version    INTEGER PRIMARY KEY NOT NULL,
                    name       TEXT NOT NULL,
                    checksum   TEXT NOT NULL, -- SHA-256 of the migration file, hex
                    applied_at TEXT NOT NULL  -- RFC 3339, UTC
                )
                """)
            if app != nil {
                try db.executeScript(
                    """
                    CREATE TABLE IF NOT EXISTS \(Self.appTable) (
                        namespace  TEXT NOT NULL,
                        version    INTEGER NOT NULL,
                        name       TEXT NOT NULL,
                        checksum   TEXT NOT NULL, -- SHA-256 of the migration's text, hex
                        applied_at TEXT NOT NULL, -- RFC 3339, UTC
                        PRIMARY KEY (namespace, version)
                    )
                    """)
            }
            // Read inside the write transaction: nobody else can record a migration until it ends.
            try verifyOnly(db)
            for (ledger, known) in ledgers {
                let records = try recorded(db, ledger)
                for migration in known where !records.contains(where: { $0.version == migration.version }) {
                    do {
                        try apply(migration, in: ledger, db)
                    } catch {
                        // An error that ended the whole transaction (SQLITE_FULL, say) leaves
                        // nothing to commit; otherwise the migrations before this one stay
                        // applied (committed below) and this one is rolled back.
                        if !db.isInTransaction { throw error }
                        failure = error
                        return
                    }
                    applied.append(migration)
                }
            }
        }
        if let failure { throw failure }
        return applied
    }

    /// What an app's migration may not touch: it may read the library's tables and seed records,
    /// but not write the store's bookkeeping (migrations, change log, sync state, identity) nor
    /// drop or alter any of them. One that deleted `schema_migrations` rows or dropped
    /// `change_log` left a store no program could open again.
    static let refusedToApps = (
        writes: RecordTypeCheck.reservedTables.subtracting(RecordTypeCheck.recordTables),
        schemaChanges: RecordTypeCheck.reservedTables
    )

    /// Runs `migration` and records it, in a savepoint of the open transaction: on error, rolled
    /// back to the savepoint (if SQLite did not end the transaction) and rethrown.
    private func apply(_ migration: Migration, in ledger: Ledger, _ db: Database) throws {
        try db.executeScript("SAVEPOINT migration")
        do {
            do {
                db.refusesTransactionControl = true
                if case .app = ledger { db.refusedTables = Self.refusedToApps }
                defer {
                    db.refusesTransactionControl = false
                    db.refusedTables = ([], [])
                }
                try db.executeScript(migration.sql)
            } catch let error as SQLiteError {
                // SQLITE_AUTH, "not authorized", says too little: the authorizer says why it
                // refused (`refusesTransactionControl`, `refusedTables`).
                let underlying =
                    error.code == SQLITE_AUTH
                    ? SQLiteError(
                        extendedCode: error.extendedCode,
                        message: db.lastRefusal ?? error.message, sql: error.sql)
                    : error
                throw StoreError.migrationFailed(migration: ledger.identifier(migration), underlying: underlying)
            }
            let values: [SQLValue] = [
                .integer(Int64(migration.version)), .text(migration.name), .text(migration.checksum),
                .text(Timestamp.format(now())),
            ]
            switch ledger {
            case .library:
                try db.execute("INSERT INTO \(Self.table) (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)", values)
            case .app(let namespace):
                try db.execute(
                    "INSERT INTO \(Self.appTable) (namespace, version, name, checksum, applied_at) VALUES (?, ?, ?, ?, ?)",
                    [.text(namespace)] + values)
            }
            try db.executeScript("RELEASE SAVEPOINT migration")
        } catch {
            if db.isInTransaction { try? db.executeScript("ROLLBACK TO SAVEPOINT migration; RELEASE SAVEPOINT migration") }
            throw error
        }
    }

    /// Throws if the database holds a modified or unknown migration (of the library, or of this
    /// store's app); changes nothing. Other apps' migrations are theirs.
    func verifyOnly(_ db: Database) throws {
        for (ledger, known) in ledgers { try verify(try recorded(db, ledger), known: known, ledger: ledger) }
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
        try verifyOnly(db)
        return try status(db).filter { $0.state == .pending }
    }

    /// The state of every migration, known or recorded; changes nothing. Migrations recorded
    /// by an app this build was not given are listed as the app's.
    func status(_ db: Database) throws -> [MigrationStatus] {
        var all: [MigrationStatus] = []
        for (ledger, known) in ledgers {
            let owner: String? = if case .app(let namespace) = ledger { namespace } else { nil }
            let records = try recorded(db, ledger)
            var statuses = known.map { migration -> MigrationStatus in
                guard let record = records.first(where: { $0.version == migration.version }) else {
                    return MigrationStatus(
                        version: migration.version, name: migration.name, state: .pending,
                        checksum: migration.checksum, appliedAt: nil, owner: owner)
                }
                let state: MigrationStatus.State = record.checksum == migration.checksum ? .applied : .modified
                return MigrationStatus(
                    version: migration.version, name: migration.name, state: state,
                    checksum: record.checksum, appliedAt: record.appliedAt, owner: owner)
            }
            for record in records where !known.contains(where: { $0.version == record.version }) {
                statuses.append(
                    MigrationStatus(
                        version: record.version, name: record.name, state: .unknown,
                        checksum: record.checksum, appliedAt: record.appliedAt, owner: owner))
            }
            all += statuses.sorted { $0.version < $1.version }
        }
        for (namespace, records) in try otherApps(db) {
            all += records.map {
                MigrationStatus(
                    version: $0.version, name: $0.name, state: .app, checksum: $0.checksum,
                    appliedAt: $0.appliedAt, owner: namespace)
            }
        }
        return all
    }

    private func verify(_ records: [Record], known migrations: [Migration], ledger: Ledger) throws {
        let unknown = records.filter { record in !migrations.contains { $0.version == record.version } }
        if !unknown.isEmpty {
            throw StoreError.databaseFromFuture(
                unknownMigrations: unknown.map { ledger.identifier(Migration(version: $0.version, name: $0.name, sql: "")) })
        }
        for record in records {
            guard let migration = migrations.first(where: { $0.version == record.version }) else { continue }
            if record.checksum != migration.checksum {
                throw StoreError.migrationModified(
                    migration: ledger.identifier(migration), recorded: record.checksum, expected: migration.checksum)
            }
        }
    }

    private static func tableExists(_ db: Database, _ name: String) throws -> Bool {
        try db.fetchOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]) != nil
    }

    private func recorded(_ db: Database, _ ledger: Ledger) throws -> [Record] {
        let decode = { (row: Statement) in
            Record(version: row.int(0), name: row.text(1), checksum: row.text(2), appliedAt: Timestamp.parse(row.text(3)))
        }
        switch ledger {
        case .library:
            guard try Self.tableExists(db, Self.table) else { return [] }
            return try db.query("SELECT version, name, checksum, applied_at FROM \(Self.table) ORDER BY version", [], decode)
        case .app(let namespace):
            guard try Self.tableExists(db, Self.appTable) else { return [] }
            return try db.query(
                "SELECT version, name, checksum, applied_at FROM \(Self.appTable) WHERE namespace = ? ORDER BY version",
                [.text(namespace)], decode)
        }
    }

    /// The namespaces of app migrations recorded in the store other than `namespace` (the
    /// configuration's), sorted: apps whose tables, and so perhaps record kinds, this program
    /// does not know.
    static func otherAppNamespaces(_ db: Database, besides namespace: String?) throws -> [String] {
        guard try tableExists(db, appTable) else { return [] }
        return try db.query("SELECT DISTINCT namespace FROM \(appTable) ORDER BY namespace") { $0.text(0) }
            .filter { $0 != namespace }
    }

    /// Migrations recorded by apps other than this store's, per namespace, in order.
    private func otherApps(_ db: Database) throws -> [(String, [Record])] {
        guard try Self.tableExists(db, Self.appTable) else { return [] }
        let rows = try db.query(
            "SELECT namespace, version, name, checksum, applied_at FROM \(Self.appTable) ORDER BY namespace, version"
        ) {
            (
                $0.text(0),
                Record(version: $0.int(1), name: $0.text(2), checksum: $0.text(3), appliedAt: Timestamp.parse($0.text(4)))
            )
        }
        var groups: [(String, [Record])] = []
        for (namespace, record) in rows where namespace != app?.namespace {
            if groups.last?.0 == namespace {
                groups[groups.count - 1].1.append(record)
            } else {
                groups.append((namespace, [record]))
            }
        }
        return groups
    }
}
