import Foundation

/// The records of a registered kind inside a transaction: `try db.records(Reminder.self).fetchAll()`.
///
/// Its statements are built once per kind from the kind's column list and cached on the
/// connection; sync compares a feed record with the stored one inside SQLite, in one query.
/// Every method runs on the connection of the `read` or `write` closure it is called from.
public struct RecordTable<Record: StoreRecord> {
    let db: Database

    private static var columnList: String { Record.columns.joined(separator: ", ") }
    private static var keyColumn: String { Record.columns[0] }

    /// Every record, ordered by key (byte order).
    public func fetchAll() throws -> [Record] {
        try db.query("SELECT \(Self.columnList) FROM \(Record.table) ORDER BY \(Self.keyColumn)", [], Self.decode)
    }

    /// `fetchEach`: sync, export and publish walk records in key order, which is `fetchAll`'s.
    func forEachRecord(_ body: (Record) throws -> Void) throws { try fetchEach(body) }

    /// Every record, ordered by key (byte order) as `fetchAll` orders them, handed to `body` one
    /// at a time as a cursor steps: none is kept, so a table of any size is read in bounded memory.
    ///
    /// `body` runs inside the `read` or `write` closure this is called from, on its connection;
    /// an error it throws (or the kind's `init(columnValues:)` throws) ends the walk and is
    /// rethrown. The task's cancellation is checked every few hundred rows (`CancellationError`).
    public func fetchEach(_ body: (Record) throws -> Void) throws {
        try db.forEachRow("SELECT \(Self.columnList) FROM \(Record.table) ORDER BY \(Self.keyColumn)") {
            try body(try Self.decode($0))
        }
    }

    /// The record with this key, or nil.
    public func find(_ key: String) throws -> Record? {
        let statement = try db.cachedStatement(Self.sql.find)
        try statement.bind(key, at: 1)
        defer { statement.reset() }
        return try statement.step() ? Self.decode(statement) : nil
    }

    /// The number of records of the kind.
    public func count() throws -> Int {
        try db.query("SELECT count(*) FROM \(Record.table)") { $0.int(0) }[0]
    }

    /// Inserts a new record; `StoreError.recordExists` if its key is taken.
    public func insert(_ record: Record) throws {
        try RecordValidation.check(Record.kind, id: record.key)
        let statement = try db.cachedStatement(Self.sql.insert)
        let values = record.columnValues
        do {
            _ = try insertingRecord(record, values) {
                try bind(values, to: statement)
                defer { statement.reset() }
                _ = try statement.step()
                return true
            }
        } catch let error as SQLiteError where error.extendedCode == SQLiteError.constraintPrimaryKey {
            throw StoreError.recordExists(kind: Record.kind, key: record.key)
        }
    }

    /// Inserts the record unless one with its key exists; true if it was inserted.
    @discardableResult
    public func insertIfAbsent(_ record: Record) throws -> Bool {
        try RecordValidation.check(Record.kind, id: record.key)
        let statement = try db.cachedStatement(Self.sql.insertIfAbsent)
        let values = record.columnValues
        return try insertingRecord(record, values) {
            try bind(values, to: statement)
            defer { statement.reset() }
            _ = try statement.step()
            return db.changes == 1
        }
    }

    /// Runs `insert` through `Database.recordingInsert` when the key column is bound the
    /// record's key as text (then the key recorded is the key stored); otherwise as it is, the
    /// pre-update hook reading the key back from the row.
    private func insertingRecord(_ record: Record, _ values: [SQLValue], _ insert: () throws -> Bool) throws -> Bool {
        guard case .text(let key)? = values.first, key == record.key else { return try insert() }
        return try db.recordingInsert(of: Record.kind, key: key, insert)
    }

    /// Replaces an existing record; `StoreError.recordNotFound` if there is none with its key.
    public func update(_ record: Record) throws {
        try RecordValidation.check(Record.kind, id: record.key)
        let statement = try db.cachedStatement(Self.sql.update)
        try bindColumns(of: record, to: statement)
        defer { statement.reset() }
        _ = try statement.step()
        guard db.changes == 1 else { throw StoreError.recordNotFound(kind: Record.kind, key: record.key) }
    }

    /// Deletes the record with this key; false if there was none.
    @discardableResult
    public func delete(_ key: String) throws -> Bool {
        let statement = try db.cachedStatement(Self.sql.delete)
        try statement.bind(key, at: 1)
        defer { statement.reset() }
        _ = try statement.step()
        guard db.changes == 1 else { return false }
        return true
    }

    /// The stored record with this record's key compared with it column by column inside
    /// SQLite (`IS`, so nulls compare equal), and the hash last received for it in the stream
    /// `stream` (its source and kind); nil if there is no such record. One query, nothing read into Swift.
    func compare(_ record: Record, stream: Int64) throws -> LocalComparison? {
        let count = Record.columns.count
        let statement = try db.cachedStatement(Self.sql.compare)
        try bindColumns(of: record, to: statement)
        try statement.bind(stream, at: Int32(count + 1))
        return try LocalComparison(stepping: statement)
    }

    /// The record's content hash for sync: every column value, in order.
    static func hash(of record: Record) -> UInt64 {
        var hash = RecordHash()
        for value in record.columnValues { hash.add(value) }
        return hash.value
    }

    private func bindColumns(of record: Record, to statement: Statement) throws {
        try bind(record.columnValues, to: statement)
    }

    private func bind(_ values: [SQLValue], to statement: Statement) throws {
        // Thrown, not trapped: the app's record type is its input (see `Store.check`).
        if values.count != Record.columns.count {
            throw StoreError.invalidRecord(
                kind: Record.kind, key: values.first?.textValue ?? "", field: "columnValues",
                reason: "holds \(values.count) values for the kind's \(Record.columns.count) columns")
        }
        for (index, value) in values.enumerated() { try statement.bind(value, at: Int32(index + 1)) }
    }

    /// The kind's statements, built once per type (see `RecordSQL`).
    private static var sql: RecordSQL { RecordSQL.of(Record.self) }

    private static func decode(_ row: Statement) throws -> Record {
        try Record(columnValues: (0..<Int32(Record.columns.count)).map { row.value($0) })
    }
}

/// The SQL of a registered kind's statements, made from its table and columns once per type
/// rather than per record (a generic type has no stored static properties; this cache stands in).
struct RecordSQL: Sendable {
    let find, insert, insertIfAbsent, update, delete, compare: String

    private init<Record: StoreRecord>(_ type: Record.Type) {
        let table = Record.table, key = Record.columns[0]
        let columns = Record.columns.joined(separator: ", ")
        let placeholders = (1...Record.columns.count).map { "?\($0)" }.joined(separator: ", ")
        find = "SELECT \(columns) FROM \(table) WHERE \(key) = ?"
        insert = "INSERT INTO \(table) (\(columns)) VALUES (\(placeholders))"
        insertIfAbsent = insert + " ON CONFLICT (\(key)) DO NOTHING"
        let assignments = Record.columns.enumerated().dropFirst().map { "\($0.element) = ?\($0.offset + 1)" }
        update = "UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE \(key) = ?1"
        delete = "DELETE FROM \(table) WHERE \(key) = ?"
        let count = Record.columns.count
        let equalities = Record.columns.enumerated().dropFirst().map { "t.\($0.element) IS ?\($0.offset + 1)" }
        compare = """
            SELECT \(equalities.isEmpty ? "1" : equalities.joined(separator: " AND ")), r.hash
            FROM \(table) AS t
            LEFT JOIN sync_records AS r ON r.stream = ?\(count + 1) AND r.key = t.\(key)
            WHERE t.\(key) = ?1
            """
    }

    /// The statements of `type`, built on first use.
    static func of<Record: StoreRecord>(_ type: Record.Type) -> RecordSQL {
        cache.withLock { byType in
            if let sql = byType[ObjectIdentifier(type)] { return sql }
            let sql = RecordSQL(type)
            byType[ObjectIdentifier(type)] = sql
            return sql
        }
    }

    private static let cache = LockedBox<[ObjectIdentifier: RecordSQL]>([:])
}

extension RecordTable: SyncedTable {
    static var kind: RecordKind { Record.kind }
    static func key(of record: Record) -> String { record.key }
    var database: Database { db }
}

extension Database {
    /// The records of a registered kind, on this connection.
    public func records<Record: StoreRecord>(_ type: Record.Type) -> RecordTable<Record> { RecordTable(db: self) }
}
