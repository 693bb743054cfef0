/// An error returned by SQLite, with its result code, its message and the SQL that failed.
///
/// Its description reads like
/// "SQLite error 19: UNIQUE constraint failed: frameworks.id - while executing `INSERT ...`".
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The extended result code (https://sqlite.org/rescode.html).
    public let extendedCode: Int32
    /// SQLite's own message (`sqlite3_errmsg`).
    public let message: String
    /// The SQL being executed, when there was one.
    public let sql: String?

    /// The primary result code: the low 8 bits of the extended one.
    public var code: Int32 { extendedCode & 0xFF }

    /// An error with SQLite's extended result code, its message and, when there was one, the SQL
    /// that failed.
    public init(extendedCode: Int32, message: String, sql: String? = nil) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// "SQLite error CODE: MESSAGE", then " - while executing `SQL`" when the SQL is known.
    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }

    // Result codes this library reacts to (https://sqlite.org/rescode.html).
    static let busy: Int32 = 5
    static let locked: Int32 = 6
    package static let readOnly: Int32 = 8
    package static let ioError: Int32 = 10
    package static let full: Int32 = 13
    /// SQLITE_IOERR_SHMSIZE and SQLITE_IOERR_SHMMAP: the `-shm` (the WAL index) could not be
    /// grown or mapped; the unix VFS writes a byte into each of its pages first, so a full disk
    /// fails there.
    package static let ioErrorSharedMemory: Set<Int32> = [ioError | (19 << 8), ioError | (21 << 8)]
    static let cantOpen: Int32 = 14
    static let constraint: Int32 = 19
    static let misuse: Int32 = 21
    /// SQLITE_ABORT_ROLLBACK: "an SQL statement aborted because the transaction that was active
    /// when the SQL statement first started was rolled back" (sqlite.org/rescode.html).
    static let abortRollback: Int32 = 516
    static let notADatabase: Int32 = 26
    static let constraintPrimaryKey: Int32 = 1555
    static let constraintUnique: Int32 = 2067
}
