import Foundation

/// Sync's writes of received hashes (`sync_records`), buffered and written `rowsPerStatement`
/// rows per statement: one multi-row upsert instead of one statement per record.
///
/// Every record a sync inserts or finds unchanged gets its received hash written. One statement
/// per record spent as much time starting and finishing statements (binding the source, opening
/// and closing the table's cursor, halting the VM) as on the rows: a 100,000-record sync spent a
/// quarter of its time there. The source is bound once per statement (`?1`).
///
/// Buffered rows are in no table until `flush()`: the reconciler flushes before it reads or
/// deletes received hashes, and at the end of the feed, inside the same transaction.
struct ReceivedHashBatch {
    static let rowsPerStatement = 128

    let db: Database
    let source: String
    private var pending: [(kind: RecordKind, key: String, hash: UInt64)] = []

    init(db: Database, source: String) {
        self.db = db
        self.source = source
        pending.reserveCapacity(Self.rowsPerStatement)
    }

    var isEmpty: Bool { pending.isEmpty }

    mutating func set(_ hash: UInt64, kind: RecordKind, key: String) throws {
        pending.append((kind, key, hash))
        if pending.count == Self.rowsPerStatement { try flush() }
    }

    /// Writes every buffered row.
    mutating func flush() throws {
        guard !pending.isEmpty else { return }
        let statement = try db.cachedStatement(pending.count == Self.rowsPerStatement ? Self.fullBatchSQL : Self.sql(rows: pending.count))
        defer {
            statement.reset()
            pending.removeAll(keepingCapacity: true)
        }
        try statement.bind(source, at: 1)
        for (offset, row) in pending.enumerated() {
            let first = Int32(2 + offset * 3)
            try statement.bind(row.kind.rawValue, at: first)
            try statement.bind(row.key, at: first + 1)
            try statement.bind(Int64(bitPattern: row.hash), at: first + 2)
        }
        _ = try statement.step()
    }

    /// Built once: looking a statement up by its text needs the text.
    private static let fullBatchSQL = sql(rows: rowsPerStatement)

    /// `INSERT ... VALUES (?1, ?2, ?3, ?4), (?1, ?5, ?6, ?7), ... ON CONFLICT ...`. A feed holds
    /// no key twice (the validator refuses duplicates), so no statement names a row twice.
    private static func sql(rows: Int) -> String {
        var sql = "INSERT INTO sync_records (source, kind, key, hash) VALUES "
        for row in 0..<rows {
            let first = 2 + row * 3
            sql += row == 0 ? "" : ", "
            sql += "(?1, ?\(first), ?\(first + 1), ?\(first + 2))"
        }
        return sql + " ON CONFLICT DO UPDATE SET hash = excluded.hash WHERE hash <> excluded.hash"
    }
}
