import Foundation

/// Sync's writes of received hashes (`sync_records`), buffered and written `rowsPerStatement`
/// rows per statement: one multi-row upsert instead of one statement per record.
///
/// Every record a sync inserts or finds unchanged gets its received hash written. One statement
/// per record spent as much time starting and finishing statements (binding the source, opening
/// and closing the table's cursor, halting the VM) as on the rows: a 100,000-record sync spent a
/// quarter of its time there. The source is bound once per statement (`?1`), the kind is
/// written in the statement.
///
/// Buffered rows are in no table until `flush()`: the reconciler flushes before it reads or
/// deletes received hashes, and at the end of the feed, inside the same transaction.
struct ReceivedHashBatch {
    static let rowsPerStatement = 128

    let db: Database
    /// The id of the source in `sync_sources` the rows are received from.
    let sourceID: Int64
    private var pending: [(kind: RecordKind, key: String, hash: UInt64)] = []

    init(db: Database, sourceID: Int64) {
        self.db = db
        self.sourceID = sourceID
        pending.reserveCapacity(Self.rowsPerStatement)
    }

    var isEmpty: Bool { pending.isEmpty }

    /// Buffers a row; rows of one statement share their kind (a feed's records come in runs
    /// of one kind), so a change of kind writes what is buffered first.
    mutating func set(_ hash: UInt64, kind: RecordKind, key: String) throws {
        if let last = pending.last, last.kind != kind { try flush() }
        pending.append((kind, key, hash))
        if pending.count == Self.rowsPerStatement { try flush() }
    }

    /// Writes every buffered row.
    mutating func flush() throws {
        guard let kind = pending.first?.kind else { return }
        let sql =
            pending.count == Self.rowsPerStatement
            ? Self.fullBatchSQL[kind] ?? Self.sql(rows: pending.count, kind: kind) : Self.sql(rows: pending.count, kind: kind)
        let statement = try db.cachedStatement(sql)
        defer {
            statement.reset()
            pending.removeAll(keepingCapacity: true)
        }
        try statement.bind(sourceID, at: 1)
        for (offset, row) in pending.enumerated() {
            let first = Int32(2 + offset * 2)
            try statement.bind(row.key, at: first)
            try statement.bind(Int64(bitPattern: row.hash), at: first + 1)
        }
        _ = try statement.step()
    }

    /// Built once per kind: looking a statement up by its text needs the text.
    private static let fullBatchSQL = Dictionary(
        uniqueKeysWithValues: RecordKind.allCases.map { ($0, sql(rows: rowsPerStatement, kind: $0)) })

    /// `INSERT ... VALUES (?1, 'framework', ?2, ?3), (?1, 'framework', ?4, ?5), ... ON CONFLICT ...`.
    /// A feed holds no key twice (the validator refuses duplicates), so no statement names a
    /// row twice.
    private static func sql(rows: Int, kind: RecordKind) -> String {
        var sql = "INSERT INTO sync_records (source_id, kind, key, hash) VALUES "
        for row in 0..<rows {
            let first = 2 + row * 2
            sql += row == 0 ? "" : ", "
            sql += "(?1, '\(kind.rawValue)', ?\(first), ?\(first + 1))"
        }
        return sql + " ON CONFLICT DO UPDATE SET hash = excluded.hash WHERE hash <> excluded.hash"
    }
}
