internal import CSQLite
import Foundation

/// One SQLite connection.
///
/// You get a `Database` only inside the closures of ``Store/read(_:)`` and ``Store/write(_:)``;
/// it is valid only there, inside the transaction the store opened for the closure. It is
/// deliberately not `Sendable`: a connection is used by one thread at a time, and the store hands
/// it to exactly one closure at a time. Every method that runs SQL throws ``SQLiteError`` (with
/// the result code, SQLite's message and the SQL) when SQLite refuses it; the statement is then
/// reset, and the closure's transaction is rolled back if the error leaves the closure.
public final class Database {
    let handle: OpaquePointer
    /// The file this connection opened, or ":memory:".
    public let path: String
    /// How long a statement waits for another connection's lock before SQLITE_BUSY.
    let busyTimeout: Duration
    private var statements: [String: Statement] = [:]
    /// Statements of literal SQL, keyed by the literal's address: no string hashing per call.
    private var literalStatements: [UInt: Statement] = [:]
    /// The literal statement asked for last, tried before `literalStatements`: a bulk write asks
    /// for one statement per record, and this spares hashing its key each time.
    private var lastLiteral: (key: UInt, statement: Statement)?
    /// On the writer's connection only: collects the record changes of each transaction from
    /// SQLite's hooks (see `ChangeCollector`). Nil on readers.
    private(set) var changeCollector: ChangeCollector?
    /// Whether the task that asked for the read or write running now was cancelled; set by the
    /// writer and the readers around each closure they run.
    var cancellation: CancellationFlag?
    /// Asked while a statement waits for another connection's lock: true to stop waiting (the
    /// statement then fails with SQLITE_BUSY). The writer sets it while BEGIN waits for another
    /// process's write lock: true once every write waiting on it was cancelled.
    var stopsWaitingForLock: (() -> Bool)?
    /// When the current wait for a lock began.
    private var busySince = ContinuousClock.now
    /// Whether a read or write closure of the store's caller runs now (set by the writer and
    /// the readers around each): a statement that begins, commits or rolls back a transaction
    /// then fails, as the store's transaction is the store's. A raw `COMMIT` in a write closure
    /// that then threw left its writes committed, and a read closure could commit its own.
    var runsCallerClosure = false
    /// Whether a write closure runs now, inside the transaction the writer began: a statement
    /// then fails if SQLite has ended that transaction (`OR ROLLBACK`, `RAISE(ROLLBACK)`, an
    /// I/O error) instead of running in autocommit mode. A closure that swallowed the error of
    /// the statement that ended it went on, and each later statement committed on its own,
    /// unobserved, while the write failed.
    var runsInWriteTransaction = false
    /// The store's files as it opened them: if one was replaced, `close()` skips the checkpoint.
    var walFiles: WALFiles?
    /// Whether a statement that writes fails when run (`sqlite3_stmt_readonly`): an in-memory
    /// store's reads, which run on the writer's connection.
    var refusesWrites = false
    /// Whether `PRAGMA query_only` stays as it is: a statement that sets it fails (readers, and
    /// an in-memory store's reads, keep it ON so that a read writes nothing).
    var locksQueryOnly = false
    /// The savepoint the writer opens around each write of a batch (`DatabaseWriter`), which a
    /// caller's closure may not name.
    static let writerSavepoint = "batched_write"
    /// While a migration's SQL runs: BEGIN, COMMIT, ROLLBACK and the migrator's own savepoint
    /// are refused when prepared. A migration's `COMMIT` committed the part before it and
    /// ended the migrator's transaction: the rest ran in autocommit, and the failure that
    /// followed left a store that no open could migrate again.
    var refusesTransactionControl = false
    /// Tables (lowercased) whose rows statements may not write, and tables they may not drop or
    /// alter: set while an app's migration runs (`Migrator`). Empty otherwise.
    var refusedTables: (writes: Set<String>, schemaChanges: Set<String>) = ([], [])
    /// Why the authorizer last refused a statement, for the error that follows (SQLite's own
    /// says only "not authorized").
    private(set) var lastRefusal: String?

    /// What the authorizer saw of the statement being prepared (see `Statement.guardedKind`).
    var preparedGuardedKind: Statement.GuardedKind = .none

    struct OpenOptions {
        var readOnly = false
        var create = true
        var busyTimeout: Duration = .seconds(5)
        /// The SQLite VFS to open through; nil is the default one. For tests only (the
        /// power-loss tests' simulated-crash VFS).
        var vfsName: String? = nil
    }

    /// Done once per process, before the first connection opens (see the shim's comment): a
    /// Swift global is initialized exactly once, thread-safely.
    private static let configured: Void = { _ = csqlite_disable_memory_statistics() }()

    init(path: String, options: OpenOptions) throws {
        Self.configured
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if options.create && !options.readOnly { flags |= SQLITE_OPEN_CREATE }
        var pointer: OpaquePointer?
        let rc = sqlite3_open_v2(path, &pointer, flags, options.vfsName)
        guard let pointer else {
            throw SQLiteError(extendedCode: rc, message: "out of memory opening \(path)")
        }
        guard rc == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(pointer)) + Self.systemReason(rc, pointer)
            sqlite3_close_v2(pointer)
            throw SQLiteError(extendedCode: rc, message: "\(message) (\(path))")
        }
        self.handle = pointer
        self.path = path
        self.busyTimeout = options.busyTimeout
        sqlite3_extended_result_codes(pointer, 1)
        // Another process's write transaction is waited for instead of surfacing "database is
        // locked", as sqlite3_busy_timeout would ("sets a busy handler that sleeps for a
        // specified amount of time when a table is locked"), by a handler of our own that also
        // stops waiting for a cancelled write (`stopsWaitingForLock`): sqlite3_busy_timeout's
        // sleeps cannot be interrupted, and Ctrl-C waited out the whole timeout (60 s).
        sqlite3_busy_handler(pointer, databaseBusyHandler, Unmanaged.passUnretained(self).toOpaque())
        // Tells each statement prepared what it is (transaction control, a query_only change, a
        // savepoint, a schema change for the change collector). The context is unretained: the
        // connection is closed (`close()`) before this object goes.
        sqlite3_set_authorizer(pointer, databaseAuthorizer, Unmanaged.passUnretained(self).toOpaque())
        // Foreign keys are off by default in SQLite, per connection: "Foreign key constraints
        // are disabled by default ... so must be enabled separately for each database
        // connection." (https://sqlite.org/foreignkeys.html)
        try execute("PRAGMA foreign_keys = ON")
    }

    /// The authorizer's step, while a statement is prepared on this connection: notes what
    /// `Statement` must guard, and tells the change collector (on the writer). Refuses only a
    /// change of `query_only` while it is locked: a flag pragma takes effect when it is
    /// *prepared* (SQLite's code generator sets the flag), so refusing to run it was too late.
    fileprivate func authorize(
        _ action: Int32, _ third: UnsafePointer<CChar>?, _ fourth: UnsafePointer<CChar>?, trigger: UnsafePointer<CChar>?
    ) -> Int32 {
        switch action {
        case SQLITE_TRANSACTION:
            if refusesTransactionControl {
                lastRefusal = "a migration may not begin, commit or roll back a transaction (it runs inside the migrator's)"
                return SQLITE_DENY
            }
            preparedGuardedKind = .transactionControl
        case SQLITE_SAVEPOINT where refusesTransactionControl && fourth.map({ sqlite3_stricmp($0, "migration") == 0 }) == true:
            lastRefusal = "a migration may not name the migrator's own savepoint"
            return SQLITE_DENY
        case SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE, SQLITE_DROP_TABLE,
            SQLITE_ALTER_TABLE,
            SQLITE_DROP_TRIGGER
        where !refusedTables.schemaChanges.isEmpty:
            // The table is the third argument, but ALTER TABLE's is the fourth (the third is the
            // schema's name), and DROP TRIGGER's third is the trigger (a library's trigger is
            // among the reserved names).
            let table = action == SQLITE_ALTER_TABLE ? fourth : third
            let name = table.map { String(cString: $0).lowercased() } ?? ""
            let writes = action == SQLITE_INSERT || action == SQLITE_UPDATE || action == SQLITE_DELETE
            // The library's own triggers keep its bookkeeping as an app seeds records (an
            // image's row moves the cache's totals): "the 6th parameter is the name of the
            // inner-most trigger or view that is responsible for the access attempt"
            // (https://sqlite.org/c3ref/set_authorizer.html).
            let byLibraryTrigger =
                trigger.map { RecordTypeCheck.libraryTriggers.contains(String(cString: $0).lowercased()) } ?? false
            if let table, !(writes && byLibraryTrigger),
                (writes ? refusedTables.writes : refusedTables.schemaChanges).contains(name)
            {
                lastRefusal = "an app's migration may not write, drop or alter the store's own table '\(String(cString: table))'"
                return SQLITE_DENY
            }
        // The writer's own savepoint around each write of a batch: a closure that released it,
        // or opened one of the same name, then threw kept its rows in the batch's commit.
        case SQLITE_SAVEPOINT where fourth.map({ sqlite3_stricmp($0, Self.writerSavepoint) == 0 }) == true:
            preparedGuardedKind = .transactionControl
        case SQLITE_PRAGMA where fourth != nil && third.map({ sqlite3_stricmp($0, "query_only") == 0 }) == true:
            if locksQueryOnly { return SQLITE_DENY }
            preparedGuardedKind = .queryOnlyChange
        default: break
        }
        changeCollector?.authorize(action, third, fourth)
        return SQLITE_OK
    }

    /// The busy handler's step: `attempts` waits so far for this lock. Sleeps as SQLite's own
    /// handler does (1, 2, 5, 10 ... 100 ms), never past `busyTimeout`; 0 to give up (the
    /// statement fails with SQLITE_BUSY), 1 to try again.
    fileprivate func waitForLock(attempts: Int32) -> Int32 {
        if attempts == 0 { busySince = ContinuousClock.now }
        if stopsWaitingForLock?() == true || cancellation?.isCancelled == true { return 0 }
        let remaining = busyTimeout - (ContinuousClock.now - busySince)
        guard remaining > .zero else { return 0 }
        let delays = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]
        let delay = Duration.milliseconds(Int(attempts) < delays.count ? delays[Int(attempts)] : 100)
        let sleep = min(delay, remaining)
        usleep(UInt32(clamping: sleep.components.seconds * 1_000_000 + sleep.components.attoseconds / 1_000_000_000_000))
        return 1
    }

    /// A private temporary database on disk (SQLite deletes it when it is closed) holding
    /// `schema`, inside a transaction never committed: where the sync spills keys that would
    /// not fit in memory (`FeedKeyRegistry`, `SupersededKeys`). Nothing in it is ever synced.
    static func scratch(schema: String) throws -> Database {
        // "" is a private temporary database, on disk, deleted when closed.
        let database = try Database(path: "", options: Database.OpenOptions())
        try database.execute("PRAGMA journal_mode = OFF")
        try database.execute("PRAGMA synchronous = OFF")
        try database.execute("PRAGMA cache_size = -8192")
        try database.execute(schema)
        try database.execute("BEGIN")
        return database
    }

    /// Starts collecting the changes to `tables` (the writer does, once, on its connection).
    func collectChanges(of tables: [ObservedKindTable]) {
        let collector = ChangeCollector(observing: tables)
        collector.install(on: handle)
        changeCollector = collector
    }

    /// Runs `body` without reporting its row changes to observers: for bookkeeping that does
    /// not change a record as observers see it (an image's last access time).
    func withoutObservation<T>(_ body: () throws -> T) rethrows -> T {
        guard let changeCollector else { return try body() }
        return try changeCollector.withoutCollecting(body)
    }

    /// Runs `insert`, the store's own insert of one record of `kind` keyed `key` (with its
    /// `dates` if its table has a date column), which returns whether it inserted the record,
    /// and returns that. The writer's collector records the change itself rather than through
    /// the pre-update hook when it can (see `ChangeCollector.recordingInsert`).
    func recordingInsert(
        of kind: RecordKind, key: String, dates: [CalendarDate]? = nil, _ insert: () throws -> Bool
    ) rethrows -> Bool {
        guard let changeCollector else { return try insert() }
        return try changeCollector.recordingInsert(of: kind, key: key, dates: dates, insert)
    }

    /// The largest string or blob this connection stores, in bytes (`SQLITE_LIMIT_LENGTH`:
    /// 1,000,000,000 unless SQLite was built otherwise); a larger one fails with SQLITE_TOOBIG.
    var maximumValueBytes: Int { Int(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1)) }

    /// Sets `maximumValueBytes` (at most the build's ceiling); returns the old value. For tests.
    @discardableResult
    func limitValueBytes(to bytes: Int) -> Int { Int(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, Int32(clamping: bytes))) }

    /// Whether `close()` ran: the handle is then dangling and never used again.
    private var isClosed = false

    /// Closes the connection now, on the calling thread (the one using it); later calls do
    /// nothing. A store closes its connections this way, not by dropping the last reference,
    /// so that they are closed when ``Store/close()`` returns: the last connection to a WAL
    /// database checkpoints and deletes the `-wal` file *by name* when it closes, so one closed
    /// late would delete the WAL of a new database created at the same path meanwhile.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        // Before the connection closes: the hooks hold an unretained pointer to the collector.
        changeCollector?.uninstall(from: handle)
        changeCollector = nil
        sqlite3_set_authorizer(handle, nil, nil)
        lastLiteral = nil
        literalStatements.removeAll()
        statements.removeAll()
        // A -wal or -shm replaced under the store: the checkpoint would copy this connection's
        // stale WAL over the database, and delete the other processes' -wal and -shm. The
        // database replaced: SQLite skips it for a connection to the old file ("moved"), but a
        // connection that opened the new one would copy the old file's frames into it.
        if walFiles?.anyReplaced == true { csqlite_skip_checkpoint_on_close(handle) }
        sqlite3_close_v2(handle)
    }

    deinit { close() }

    /// The database's file name as SQLite resolved it (absolute, symbolic links followed: the
    /// unix VFS names the `-wal` and `-shm` after it); nil in memory.
    var fileName: String? {
        guard let name = sqlite3_db_filename(handle, "main") else { return nil }
        let text = String(cString: name)
        return text.isEmpty ? nil : text
    }

    /// Makes `close()` leave the WAL as it is: no checkpoint, even as the database's last
    /// connection, and so no deletion of the -wal and -shm (see the shim). For a connection that
    /// looked at a file that is not a store, whose -wal is another application's.
    func skipCheckpointOnClose() {
        csqlite_skip_checkpoint_on_close(handle)
    }

    /// Throws `CancellationError` if the task awaiting the running ``Store/read(_:)`` or
    /// ``Store/write(_:)`` was cancelled. Call it where a transaction loops (sync's reconciler does, between
    /// records): the closure then throws and its transaction is rolled back. The store's own
    /// loops over a query's rows (`fetchAll` and the tables' reads) call it every few hundred rows.
    public func checkCancellation() throws {
        if let cancellation, cancellation.isCancelled { throw CancellationError() }
    }

    // MARK: Executing SQL

    /// Runs a statement with `arguments` bound to its `?` placeholders, discarding any rows; SQL
    /// of several statements (`CREATE TABLE ...; CREATE INDEX ...`) runs them all, in order, if
    /// it has no arguments. Prepared statements are cached on this connection for the next call
    /// with the same SQL.
    ///
    /// - Throws: ``SQLiteError`` if the SQL does not compile or holds no statement, if the
    ///   arguments are not one for each placeholder (or are given to SQL of several
    ///   statements), or if a step fails (a constraint, say). Inside ``Store/read(_:)`` a
    ///   write fails: the connection is read-only.
    ///
    /// Inside ``Store/write(_:)``, the records it inserts, updates or deletes are observed like
    /// those the tables write.
    public func execute(_ sql: String, _ arguments: [SQLValue] = []) throws {
        let statement = try cachedStatement(sql)
        if statement.nextOffset != nil, !arguments.isEmpty {
            throw SQLiteError(
                extendedCode: SQLiteError.misuse, message: "arguments are bound to one statement, and this SQL holds several",
                sql: sql)
        }
        try statement.bind(arguments)
        do {
            defer { statement.reset() }
            while try statement.step() {}
        }
        // The rest one by one, in a loop (not recursion: a script of any length), each prepared
        // where it begins in the one string and not cached.
        var next = statement.nextOffset
        while let offset = next {
            let following = try Statement(database: self, sql: sql, from: offset)
            try following.bind([])
            while try following.step() {}
            next = following.nextOffset
        }
    }

    /// Runs one statement of literal SQL with arguments, discarding any rows (hot paths).
    func execute(literal sql: StaticString, _ arguments: [SQLValue] = []) throws {
        let statement = try cachedStatement(literal: sql)
        if !arguments.isEmpty { try statement.bind(arguments) }
        defer { statement.reset() }
        while try statement.step() {}
    }

    /// Runs a script of several statements without arguments (migrations, pragmas).
    func executeScript(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text =
                (message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))) + Self.systemReason(rc, handle)
            sqlite3_free(message)
            throw SQLiteError(extendedCode: sqlite3_extended_errcode(handle), message: text, sql: sql)
        }
    }

    /// Every row of a query with `arguments` bound to its `?` placeholders, copied out in order.
    ///
    /// - Throws: ``SQLiteError`` if the SQL does not compile or a step fails;
    ///   `CancellationError` once the task awaiting the read or write it runs in is cancelled
    ///   (see ``checkCancellation()``).
    public func fetchAll(_ sql: String, _ arguments: [SQLValue] = []) throws -> [Row] {
        try query(sql, arguments) { Row(statement: $0) }
    }

    /// The first row of a query with `arguments` bound to its `?` placeholders; nil if it has
    /// none. The rest of the rows are not read.
    ///
    /// - Throws: ``SQLiteError`` if the SQL does not compile or the first step fails.
    public func fetchOne(_ sql: String, _ arguments: [SQLValue] = []) throws -> Row? {
        let statement = try queryStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        return try statement.step() ? Row(statement: statement) : nil
    }

    /// Runs a query and hands each row to `body` while the statement points at it, keeping
    /// none: a cursor, for reading a table of any size in bounded memory. Looks at the running
    /// read's or write's cancellation every `rowsBetweenCancellationChecks` rows.
    func forEachRow(_ sql: String, _ arguments: [SQLValue] = [], _ body: (Statement) throws -> Void) throws {
        let statement = try queryStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        var rows = 0
        while try statement.step() {
            rows &+= 1
            if rows % Self.rowsBetweenCancellationChecks == 0 { try checkCancellation() }
            try body(statement)
        }
    }

    /// How many rows `forEachRow` and `query` step between two looks at the cancellation of the
    /// read or write they run in (`checkCancellation`): a cancelled task's long read ends within
    /// a few hundred rows (Ctrl-C on `storectl orders list`), and a short one pays no lock.
    static let rowsBetweenCancellationChecks = 256

    /// Runs a query and maps each row while the statement points at it.
    ///
    /// The array reserves as many rows as this statement returned last time (an estimate, free
    /// to take); if far fewer came, it is copied to its size, so a table that shrank does not
    /// leave its caller holding the old one's capacity.
    func query<T>(_ sql: String, _ arguments: [SQLValue] = [], _ map: (Statement) throws -> T) throws -> [T] {
        let statement = try queryStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        var results: [T] = []
        if statement.lastRowCount > 0 { results.reserveCapacity(statement.lastRowCount) }
        while try statement.step() {
            if (results.count + 1) % Self.rowsBetweenCancellationChecks == 0 { try checkCancellation() }
            results.append(try map(statement))
        }
        statement.lastRowCount = results.count
        return results.withoutExcessCapacity()
    }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE run on this connection
    /// (`sqlite3_changes`).
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last row inserted through this connection.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open on this connection.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    // MARK: Statements

    /// A prepared statement for `sql`, prepared once per connection and reused
    /// (sqlite3_prepare is a large share of a small statement's cost).
    ///
    /// One still being walked (a `fetchEach` whose body runs the same query) is not handed out
    /// again: a fresh statement is, finalized after its use. Reused, the inner walk took the
    /// outer one's rows and reset it, and the outer walk started over, forever.
    func cachedStatement(literal sql: StaticString) throws -> Statement {
        let key = UInt(bitPattern: sql.utf8Start)
        if let last = lastLiteral, last.key == key, !last.statement.isBusy { return last.statement }
        let statement: Statement
        if let cached = literalStatements[key] {
            if cached.isBusy { return try Statement(database: self, sql: sql.description) }
            statement = cached
        } else {
            statement = try cachedStatement(sql.description)
            if statement.isBusy { return statement }
            literalStatements[key] = statement
        }
        lastLiteral = (key, statement)
        return statement
    }

    /// The most statements of non-literal SQL kept prepared: SQL made anew for each call
    /// (`"SELECT \(i)"`) would otherwise be kept, each, for the connection's life (30,000 of
    /// them held 70 MB). Past it, the cache starts over.
    static let maximumCachedStatements = 256

    /// The cached statement of a query: one statement (a second one after it would never run).
    private func queryStatement(_ sql: String) throws -> Statement {
        let statement = try cachedStatement(sql)
        if statement.nextOffset != nil {
            throw SQLiteError(
                extendedCode: SQLiteError.misuse, message: "a query is one statement, and this SQL holds more after the first",
                sql: sql)
        }
        return statement
    }

    /// The statements of non-literal SQL kept prepared now (for tests).
    var cachedStatementCount: Int { statements.count }

    func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statements[sql] {
            if statement.isBusy { return try Statement(database: self, sql: sql) }
            return statement
        }
        let statement = try Statement(database: self, sql: sql)
        // Statements in use stay alive with their users; literal ones stay in `literalStatements`.
        if statements.count >= Self.maximumCachedStatements { statements.removeAll(keepingCapacity: true) }
        statements[sql] = statement
        return statement
    }

    func error(_ rc: Int32, sql: String?) -> SQLiteError {
        SQLiteError(
            extendedCode: sqlite3_extended_errcode(handle) == 0 ? rc : sqlite3_extended_errcode(handle),
            message: String(cString: sqlite3_errmsg(handle)) + Self.systemReason(rc, handle),
            sql: sql
        )
    }

    /// For an I/O error, a full disk or a file that cannot be opened, what the operating system
    /// said (`sqlite3_system_errno`), as " (No space left on device)": SQLite's own words, "disk
    /// I/O error" or "unable to open database file", say neither which resource ran out (space,
    /// inodes, file descriptors) nor why (the disk-full review). Empty otherwise.
    static func systemReason(_ rc: Int32, _ handle: OpaquePointer) -> String {
        let primary = rc & 0xFF
        guard primary == SQLiteError.ioError || primary == SQLiteError.full || primary == SQLiteError.cantOpen else {
            return ""
        }
        let code = sqlite3_system_errno(handle)
        guard code != 0, let text = strerror(code) else { return "" }
        return " (\(String(cString: text)))"
    }

    // MARK: Transactions

    enum TransactionKind: String { case deferred = "DEFERRED", immediate = "IMMEDIATE" }

    /// Runs `body` in a transaction: committed if it returns, rolled back and rethrown if it throws.
    func inTransaction<T>(_ kind: TransactionKind, _ body: () throws -> T) throws -> T {
        try execute("BEGIN \(kind.rawValue) TRANSACTION")
        do {
            let result = try body()
            try execute("COMMIT TRANSACTION")
            return result
        } catch {
            rollbackIfNeeded()
            throw error
        }
    }

    func rollbackIfNeeded() {
        if isInTransaction { try? executeScript("ROLLBACK TRANSACTION") }
    }
}

/// A connection belongs to the one queue that runs it (the writer's, or a reader's): it is
/// handed to a closure for the length of one transaction and must not escape it or cross to
/// another task. Marked unavailable so the compiler refuses to send it.
@available(*, unavailable)
extension Database: Sendable {}

/// SQLite's busy handler for every connection: `context` is the `Database` (unretained: the
/// handler goes with the connection, which the `Database` closes).
private func databaseBusyHandler(_ context: UnsafeMutableRawPointer?, _ attempts: Int32) -> Int32 {
    guard let context else { return 0 }
    return Unmanaged<Database>.fromOpaque(context).takeUnretainedValue().waitForLock(attempts: attempts)
}

/// The authorizer every connection installs (see `Database.authorize`).
private func databaseAuthorizer(
    _ context: UnsafeMutableRawPointer?, _ action: Int32, _ third: UnsafePointer<CChar>?, _ fourth: UnsafePointer<CChar>?,
    _ database: UnsafePointer<CChar>?, _ trigger: UnsafePointer<CChar>?
) -> Int32 {
    guard let context else { return SQLITE_OK }
    return Unmanaged<Database>.fromOpaque(context).takeUnretainedValue().authorize(action, third, fourth, trigger: trigger)
}
