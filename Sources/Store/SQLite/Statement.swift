internal import CSQLite
import Foundation

/// SQLite copies bound text and blobs when given this destructor.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement. Owns its pointer and finalizes it in `deinit`.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    private unowned let database: Database
    /// On the writer: whether this is a SAVEPOINT, RELEASE or ROLLBACK TO statement (told by the
    /// change collector's authorizer while it was prepared), reported to the collector each
    /// time it runs.
    private let savepoint: ChangeCollector.SavepointStatement?
    /// How many rows the last `Database.query` of this statement returned: the capacity the
    /// next one reserves, so that a repeated fetch of a large table (an observer's, a list's)
    /// neither grows its array step by step (a copy of every row done so far, each time) nor
    /// touches fresh pages for the copies.
    var lastRowCount = 0
    /// Where the next statement of the SQL this one was prepared from begins (a UTF-8 offset in
    /// it), if anything but whitespace, `;` and comments follows this one: `Database.execute`
    /// runs it next, a query refuses it (SQLite prepares the first statement only, and the rest
    /// used to be dropped without a word).
    let nextOffset: Int?
    /// What this statement is, for the checks `step` makes against its connection's state.
    let guardedKind: GuardedKind

    /// Statements `step` refuses in some states of their connection (see `Database`).
    enum GuardedKind {
        case none
        /// BEGIN, COMMIT, END or ROLLBACK (not ROLLBACK TO a savepoint), or a savepoint
        /// statement naming the writer's own savepoint: refused inside a caller's read or write
        /// closure.
        case transactionControl
        /// `PRAGMA query_only = ...`: refused while the connection locks it.
        case queryOnlyChange
    }

    /// Prepares the statement of `sql` that begins at UTF-8 offset `offset` (the first, by
    /// default). Only a statement cached for reuse is prepared as persistent.
    init(database: Database, sql: String, from offset: Int = 0) throws {
        var pointer: OpaquePointer?
        database.changeCollector?.preparedSavepoint = nil
        database.preparedGuardedKind = .none
        var consumed = offset
        let flags = UInt32(offset == 0 ? SQLITE_PREPARE_PERSISTENT : 0)
        let rc = sql.withCString { start -> Int32 in
            var tail: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v3(database.handle, start + offset, -1, flags, &pointer, &tail)
            if let tail { consumed = tail - start }
            return rc
        }
        guard rc == SQLITE_OK else {
            // Refused by the authorizer: say why, not "not authorized".
            if rc == SQLITE_AUTH, database.locksQueryOnly {
                throw SQLiteError(
                    extendedCode: SQLiteError.readOnly, message: "a read may not write: query_only stays on", sql: sql)
            }
            throw database.error(rc, sql: sql)
        }
        guard let pointer else {
            // SQLITE_OK without a statement: nothing but whitespace and comments ("not an error").
            throw SQLiteError(extendedCode: SQLITE_MISUSE, message: "the SQL holds no statement", sql: sql)
        }
        self.handle = pointer
        self.sql = offset == 0 ? sql : String(Substring(sql.utf8.dropFirst(offset).prefix(consumed - offset)))
        self.database = database
        self.nextOffset = Self.nextStatement(after: consumed, in: sql)
        self.guardedKind = database.preparedGuardedKind
        self.savepoint = database.changeCollector?.preparedSavepoint
        database.changeCollector?.preparedSavepoint = nil
    }

    /// The UTF-8 offset in `sql` of the next statement from `offset` on, or nil if only
    /// whitespace, `;` and comments follow.
    private static func nextStatement(after offset: Int, in sql: String) -> Int? {
        let rest = sql.utf8.dropFirst(offset)
        var index = rest.startIndex
        func next(_ byte: UInt8, after position: String.UTF8View.Index) -> Bool {
            let following = rest.index(after: position)
            return following < rest.endIndex && rest[following] == byte
        }
        while index < rest.endIndex {
            let byte = rest[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0C || byte == 0x3B {
                index = rest.index(after: index)
            } else if byte == 0x2D, next(0x2D, after: index) { // -- to the end of the line
                while index < rest.endIndex, rest[index] != 0x0A { index = rest.index(after: index) }
            } else if byte == 0x2F, next(0x2A, after: index) { // /* to */ (or the end)
                index = rest.index(index, offsetBy: 2)
                while index < rest.endIndex, !(rest[index] == 0x2A && next(0x2F, after: index)) {
                    index = rest.index(after: index)
                }
                index = index < rest.endIndex ? rest.index(index, offsetBy: 2) : index
            } else {
                return sql.utf8.distance(from: sql.utf8.startIndex, to: index)
            }
        }
        return nil
    }

    deinit { sqlite3_finalize(handle) }

    // MARK: Binding

    func bind(_ values: [SQLValue]) throws {
        // Too few bound NULL to the rest, too many failed with "column index out of range".
        let placeholders = Int(sqlite3_bind_parameter_count(handle))
        if values.count != placeholders {
            throw SQLiteError(
                extendedCode: SQLITE_RANGE,
                message:
                    "\(values.count) argument\(values.count == 1 ? "" : "s") for \(placeholders) placeholder\(placeholders == 1 ? "" : "s")",
                sql: sql)
        }
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    func bind(_ value: SQLValue, at index: Int32) throws {
        switch value {
        case .null: try check(sqlite3_bind_null(handle, index))
        case .integer(let int): try bind(int, at: index)
        case .real(let double): try check(sqlite3_bind_double(handle, index, double))
        case .text(let text): try bind(text, at: index)
        case .blob(let data): try bind(data, at: index)
        }
    }

    func bind(_ value: Int64, at index: Int32) throws {
        try check(sqlite3_bind_int64(handle, index, value))
    }

    func bind(_ value: String, at index: Int32) throws {
        // Bound by length, not as a C string, so text with NUL characters round-trips.
        var text = value
        let rc = text.withUTF8 { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, transient) }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                sqlite3_bind_text64(handle, index, $0, UInt64(buffer.count), transient, UInt8(SQLITE_UTF8))
            }
        }
        try check(rc)
    }

    /// Binds `utf8`, UTF-8 text, where SQLite reads it in place, without its usual copy, for as
    /// long as `body` runs (which steps the statement); then unbinds it. For very large values: a
    /// million-record sync logs a change-log text of tens of megabytes, which a copy would double.
    func withText<T>(_ utf8: [UInt8], at index: Int32, _ body: () throws -> T) throws -> T {
        try utf8.withUnsafeBufferPointer { try withText($0, at: index, body) }
    }

    /// Binds `text` in place, as above, for as long as `body` runs. For the hot single-record
    /// statements (a framework's insert, sync's insert-if-absent and compare), where SQLite's
    /// copy was a malloc, a memcpy and a free per field.
    func withText<T>(_ text: String, at index: Int32, _ body: () throws -> T) throws -> T {
        var text = text
        return try text.withUTF8 { try withText($0, at: index, body) }
    }

    private func withText<T>(_ buffer: UnsafeBufferPointer<UInt8>, at index: Int32, _ body: () throws -> T) throws -> T {
        // SQLITE_STATIC (a nil destructor): "the pointer to the content will remain valid and
        // will not change ... until either the prepared statement is finalized or the same SQL
        // parameter is bound to something else" (https://sqlite.org/c3ref/bind_blob.html).
        let rc = buffer.withMemoryRebound(to: CChar.self) { chars -> Int32 in
            guard let base = chars.baseAddress else { return sqlite3_bind_text(handle, index, "", 0, transient) }
            return sqlite3_bind_text64(handle, index, base, UInt64(chars.count), nil, UInt8(SQLITE_UTF8))
        }
        try check(rc)
        // Unbound before the buffer goes: the statement, cached, must never keep the pointer.
        defer { sqlite3_bind_null(handle, index) }
        return try body()
    }

    func bind(_ value: String?, at index: Int32) throws {
        if let value { try bind(value, at: index) } else { try check(sqlite3_bind_null(handle, index)) }
    }

    func bind(_ value: Data, at index: Int32) throws {
        let rc = value.withUnsafeBytes { buffer -> Int32 in
            // A zero-length blob, not NULL, for empty data.
            guard let base = buffer.baseAddress else { return sqlite3_bind_zeroblob(handle, index, 0) }
            return sqlite3_bind_blob64(handle, index, base, UInt64(buffer.count), transient)
        }
        try check(rc)
    }

    private func check(_ rc: Int32) throws {
        if rc != SQLITE_OK { throw database.error(rc, sql: sql) }
    }

    // MARK: Stepping

    /// Advances to the next row: true if there is one, false when done.
    func step() throws -> Bool {
        // Checked when run, not when prepared: a statement is cached and run again later.
        if guardedKind != .none || database.refusesWrites { try checkAllowed() }
        if database.runsInWriteTransaction, !database.isInTransaction { throw Self.transactionEnded(sql: sql) }
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE:
            if let savepoint { database.changeCollector?.savepointDidRun(savepoint) }
            return false
        case let rc:
            let error = database.error(rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    func reset() { sqlite3_reset(handle) }

    /// What a statement of a write closure meets once SQLite has rolled back the write's
    /// transaction, and what the write fails with.
    static func transactionEnded(sql: String?) -> SQLiteError {
        SQLiteError(
            extendedCode: SQLiteError.abortRollback,
            message:
                "SQLite rolled back the write's transaction (an OR ROLLBACK conflict, RAISE(ROLLBACK), or an error that ends it): nothing more runs in it, and the write fails",
            sql: sql)
    }

    private func checkAllowed() throws {
        if database.refusesWrites, sqlite3_stmt_readonly(handle) == 0 {
            throw SQLiteError(extendedCode: SQLiteError.readOnly, message: "a read may not write", sql: sql)
        }
        switch guardedKind {
        case .transactionControl where database.runsCallerClosure:
            throw SQLiteError(
                extendedCode: SQLiteError.misuse,
                message:
                    "a read or write closure runs inside the store's transaction: it may not begin, commit or roll back one, nor use the savepoint \(Database.writerSavepoint) (a savepoint of its own may)",
                sql: sql)
        case .queryOnlyChange where database.locksQueryOnly:
            throw SQLiteError(
                extendedCode: SQLiteError.readOnly, message: "a read may not write: query_only stays on", sql: sql)
        default: break
        }
    }

    /// Whether it has been stepped and not yet reset or run to its end: another walk over it
    /// would take its rows from under the one under way.
    var isBusy: Bool { sqlite3_stmt_busy(handle) != 0 }

    // MARK: Columns of the current row

    var columnCount: Int32 { sqlite3_column_count(handle) }

    func columnName(_ index: Int32) -> String { String(cString: sqlite3_column_name(handle, index)) }

    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }

    func int64(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    func int(_ index: Int32) -> Int { Int(sqlite3_column_int64(handle, index)) }

    func double(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }

    func text(_ index: Int32) -> String {
        // Read by length so embedded NULs survive; sqlite3_column_bytes after _text, as the
        // documentation advises.
        guard let pointer = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    func optionalText(_ index: Int32) -> String? { isNull(index) ? nil : text(index) }

    /// The column as UTF-8 bytes, converted by SQLite from the database's text encoding if it
    /// is not UTF-8 (`data` would return a UTF-16 database's text as UTF-16): for text read
    /// as bytes, such as the change log's JSON.
    func utf8Data(_ index: Int32) -> Data {
        guard let pointer = sqlite3_column_text(handle, index) else { return Data() }
        return Data(bytes: pointer, count: Int(sqlite3_column_bytes(handle, index)))
    }

    func data(_ index: Int32) -> Data {
        guard let pointer = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: pointer, count: Int(sqlite3_column_bytes(handle, index)))
    }

    func value(_ index: Int32) -> SQLValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer(int64(index))
        case SQLITE_FLOAT: .real(double(index))
        case SQLITE_TEXT: .text(text(index))
        case SQLITE_BLOB: .blob(data(index))
        default: .null
        }
    }
}
