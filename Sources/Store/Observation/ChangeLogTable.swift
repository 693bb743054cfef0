import Foundation

/// The `change_log` table: written by the writer inside each transaction, read by observers.
struct ChangeLogTable {
    let db: Database

    /// Transactions kept in the log; older ones are pruned as new ones are written. Observers
    /// read the log within a poll interval (100 ms) of each commit, so only an observer stalled
    /// for 10,000 transactions could miss pruned ones; it is not told (a known limit).
    static let retainedTransactions: Int64 = 10_000

    /// Logs one transaction's changes and returns its `tx`.
    @discardableResult
    func append(_ changes: [Change], committedAt: Date) throws -> Int64 {
        let json = Self.encode(changes)
        let statement = try db.cachedStatement(literal: "INSERT INTO change_log (committed_at, changes) VALUES (?, ?)")
        try statement.bind(Timestamp.format(committedAt), at: 1)
        // In place: a large sync's log text is tens of megabytes, not worth a second copy.
        try statement.withText(json, at: 2) {
            defer { statement.reset() }
            _ = try statement.step()
        }
        let tx = db.lastInsertedRowID
        if tx % 100 == 0 {
            try db.execute("DELETE FROM change_log WHERE tx <= ?", [.integer(tx - Self.retainedTransactions)])
        }
        return tx
    }

    /// The same text as `JSONWriter(pretty: false)` would give for `changes.map(\.jsonValue)`,
    /// written directly: a sync logs one change per record, so this runs 100,000 times for a
    /// 100,000-record sync.
    static func encode(_ changes: [Change]) -> String {
        var out = "["
        out.reserveCapacity(changes.count * 64)
        for (index, change) in changes.enumerated() {
            if index > 0 { out += "," }
            out += "{\"kind\":\""
            out += change.kind.rawValue
            out += "\",\"key\":"
            JSONWriter.writeString(change.key, into: &out)
            out += ",\"operation\":\""
            out += change.operation.rawValue
            out += "\""
            if change.kind == .event {
                out += ",\"dates\":["
                for (position, date) in change.dates.enumerated() {
                    if position > 0 { out += "," }
                    out += "\"" + date.description + "\""
                }
                out += "]"
            }
            out += "}"
        }
        return out + "]"
    }

    func latestTransaction() throws -> Int64 {
        try db.query("SELECT coalesce(max(tx), 0) FROM change_log") { $0.int64(0) }[0]
    }

    /// Logged transactions after `transaction`, in order.
    func batches(after transaction: Int64) throws -> [ChangeBatch] {
        try db.query("SELECT tx, changes FROM change_log WHERE tx > ? ORDER BY tx", [.integer(transaction)]) { row in
            let json = (try? JSONParser.parse(Data(row.text(1).utf8))) ?? .array([])
            guard case .array(let values) = json else { return ChangeBatch(transaction: row.int64(0), changes: []) }
            return ChangeBatch(transaction: row.int64(0), changes: values.compactMap(Change.init(json:)))
        }
    }
}
