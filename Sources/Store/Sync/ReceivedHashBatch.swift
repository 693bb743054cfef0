import Foundation

/// Sync's writes of received hashes (`sync_records`), buffered and written `rowsPerStatement`
/// rows per statement: one multi-row upsert instead of one statement per record.
///
/// Every record a sync inserts or finds unchanged gets its received hash written. One statement
/// per record spent as much time starting and finishing statements (binding the source, opening
/// and closing the table's cursor, halting the VM) as on the rows: a 100,000-record sync spent a
/// quarter of its time there. A row names its stream (source and kind, `sync_streams`) by its
/// integer id, bound once per statement (`?1`).
///
/// Buffered rows are in no table until `flush()`: the reconciler flushes before it reads or
/// deletes received hashes, and at the end of the feed, inside the same transaction.
struct ReceivedHashBatch {
    static let rowsPerStatement = 128

    let db: Database
    private var stream: Int64 = 0
    private var pending: [(key: String, hash: UInt64)] = []

    init(db: Database) {
        self.db = db
        pending.reserveCapacity(Self.rowsPerStatement)
    }

    var isEmpty: Bool { pending.isEmpty }

    /// Buffers a row of the stream with id `stream`; rows of one statement share their stream (a
    /// feed's records come in runs of one kind), so a change of stream writes what is buffered
    /// first.
    mutating func set(_ hash: UInt64, stream: Int64, key: String) throws {
        if stream != self.stream {
            try flush()
            self.stream = stream
        }
        pending.append((key, hash))
        if pending.count == Self.rowsPerStatement { try flush() }
    }

    /// Writes every buffered row.
    mutating func flush() throws {
        guard !pending.isEmpty else { return }
        let statement = try db.cachedStatement(
            pending.count == Self.rowsPerStatement ? Self.fullBatchSQL : Self.sql(rows: pending.count))
        defer {
            statement.reset()
            pending.removeAll(keepingCapacity: true)
        }
        try statement.bind(stream, at: 1)
        for (offset, row) in pending.enumerated() {
            let first = Int32(2 + offset * 2)
            try statement.bind(row.key, at: first)
            try statement.bind(Int64(bitPattern: row.hash), at: first + 1)
        }
        _ = try statement.step()
    }

    /// Built once: looking a statement up by its text needs the text.
    private static let fullBatchSQL = sql(rows: rowsPerStatement)

    /// `INSERT ... VALUES (?1, ?2, ?3), (?1, ?4, ?5), ... ON CONFLICT ...`. A feed holds no key
    /// twice per kind (the validator refuses duplicates), so no statement names a row twice.
    private static func sql(rows: Int) -> String {
        var sql = "INSERT INTO sync_records (stream, key, hash) VALUES "
        for row in 0..<rows {
            let first = 2 + row * 2
            sql += row == 0 ? "" : ", "
            sql += "(?1, ?\(first), ?\(first + 1))"
        }
        return sql + " ON CONFLICT DO UPDATE SET hash = excluded.hash WHERE hash <> excluded.hash"
    }
}
