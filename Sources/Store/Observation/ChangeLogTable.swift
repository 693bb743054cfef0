import Foundation

/// The `change_log` table: written by the writer inside each transaction, read by observers.
struct ChangeLogTable {
    let db: Database

    /// Transactions kept in the log (and at most `retainedBytes` of them); older ones are
    /// pruned as new ones are written. Observers
    /// read the log within a poll interval (100 ms) of each commit, so only an observer stalled
    /// for 10,000 transactions (its process suspended, say) misses pruned ones; it is told, by
    /// the gap in the transactions (`ChangeBatch.missedTransactions`).
    static let retainedTransactions: Int64 = 10_000

    /// The most bytes of `changes` the log keeps, its newest transaction whatever its size:
    /// older transactions go once the newer ones hold this much. 10,000 syncs that changed
    /// 200,000 records each would have kept 28 GB. (Pruned transactions are told to observers
    /// that had not read them, and a publish past them starts a new generation.)
    var retainedBytes: Int64 = 64 << 20

    /// A transaction logging at least this many bytes checks the size bound at once; others
    /// every 1,000 transactions (the check reads the size of every row kept: once per 1,000
    /// small transactions it costs each about a microsecond, and they can add at most 64 MiB
    /// between two checks).
    static let sizeCheckBytes = 64 << 10

    /// Logs one transaction's changes and returns its `tx`. `sized`: the table records each
    /// row's size (migration 0015); false for a store not migrated that far yet.
    @discardableResult
    func append(_ changes: ChangeList, committedAt: Date, sized: Bool = true) throws -> Int64 {
        let json = Self.encode(changes)
        let statement =
            sized
            ? try db.cachedStatement(literal: "INSERT INTO change_log (committed_at, changes, size) VALUES (?, ?, ?)")
            : try db.cachedStatement(literal: "INSERT INTO change_log (committed_at, changes) VALUES (?, ?)")
        try statement.bind(Timestamp.format(committedAt), at: 1)
        if sized { try statement.bind(Int64(json.count), at: 3) }
        // In place: a large sync's log text is tens of megabytes, not worth a second copy.
        try statement.withText(json, at: 2) {
            defer { statement.reset() }
            _ = try statement.step()
        }
        let tx = db.lastInsertedRowID
        if tx % 100 == 0 {
            try db.execute("DELETE FROM change_log WHERE tx <= ?", [.integer(tx - Self.retainedTransactions)])
        }
        if sized, tx % 1_000 == 0 || json.count >= Self.sizeCheckBytes { try pruneBySize(newest: tx) }
        return tx
    }

    /// Removes the transactions older than those whose sizes, newest first, add up to more than
    /// `retainedBytes`, never the newest. Reads the size column only, from the start of each
    /// row (migration 0015 put it before the text): no overflow page of the texts is read. The
    /// usual answer, nothing to remove, costs one sum (about a millisecond for 10,000 rows).
    private func pruneBySize(newest: Int64) throws {
        let total = try db.query("SELECT coalesce(sum(size), 0) FROM change_log") { $0.int64(0) }.first ?? 0
        guard total > retainedBytes else { return }
        var kept: Int64 = 0
        var cutoff: Int64?
        let statement = try db.cachedStatement(literal: "SELECT tx, size FROM change_log ORDER BY tx DESC")
        defer { statement.reset() }
        while try statement.step() {
            kept += statement.int64(1)
            let tx = statement.int64(0)
            if kept > retainedBytes, tx < newest {
                cutoff = tx
                break
            }
        }
        if let cutoff { try db.execute("DELETE FROM change_log WHERE tx <= ?", [.integer(cutoff)]) }
    }

    /// The `changes` text of one transaction: a JSON array in which consecutive changes of one
    /// kind and operation share an element, `{"kind":"framework","operation":"insert","keys":[...]}`,
    /// and each event change has its own, `{"kind":"event","key":"e-1","operation":"update","dates":[...]}`
    /// (rows written before grouping hold only the second form; `changes(in:)` reads both).
    /// UTF-8 bytes, written directly: a 100,000-record sync logs 100,000 changes, and the grouped
    /// form is about a third the size of one element per change (less to write, and to commit).
    /// One pass over the changes, read in place (`ChangeList.forEachChange`).
    static func encode(_ changes: ChangeList) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        out.reserveCapacity(estimatedSize(of: changes))
        // The element still open: a group of keys of one kind and operation.
        var group: (kindPosition: UInt16, operation: Change.Operation)?
        var isFirst = true
        changes.forEachChange { kindPosition, kind, key, operation, dates in
            let isEvent = kind == .event
            if !isEvent, let open = group, open.kindPosition == kindPosition, open.operation == operation {
                out.append(UInt8(ascii: ","))
                JSONWriter.writeString(key, into: &out)
                return
            }
            if group != nil {
                out.append(contentsOf: "]}".utf8)
                group = nil
            }
            if !isFirst { out.append(UInt8(ascii: ",")) }
            isFirst = false
            out.append(contentsOf: #"{"kind":""#.utf8)
            out.append(contentsOf: kind.rawValue.utf8)
            if isEvent {
                out.append(contentsOf: #"","key":"#.utf8)
                JSONWriter.writeString(key, into: &out)
                out.append(contentsOf: #","operation":""#.utf8)
                out.append(contentsOf: operation.rawValue.utf8)
                out.append(contentsOf: #"","dates":["#.utf8)
                for (position, date) in dates.enumerated() {
                    if position > 0 { out.append(UInt8(ascii: ",")) }
                    JSONWriter.writeString(date.description, into: &out)
                }
                out.append(contentsOf: "]}".utf8)
                return
            }
            out.append(contentsOf: #"","operation":""#.utf8)
            out.append(contentsOf: operation.rawValue.utf8)
            out.append(contentsOf: #"","keys":["#.utf8)
            JSONWriter.writeString(key, into: &out)
            group = (kindPosition, operation)
        }
        if group != nil { out.append(contentsOf: "]}".utf8) }
        out.append(UInt8(ascii: "]"))
        return out
    }

    /// About the bytes `encode` writes (exact for keys that need no escaping), so the text is
    /// made in one buffer: a flat guess of 24 bytes a change was a third of an event's element,
    /// and growing the buffer by doubling held two copies at once (a sync of 1,000,000 events
    /// logs about 80 MB: 48 MB and 96 MB side by side at its commit).
    static func estimatedSize(of changes: ChangeList) -> Int {
        var size = 64
        changes.forEachChange { _, kind, key, operation, dates in
            size += key.utf8.count + 3 // quotes and a comma
            if kind == .event {
                size += 60 + kind.rawValue.utf8.count + operation.rawValue.utf8.count + dates.count * 13
            }
        }
        // Elements of grouped keys: a few per transaction.
        return size + 64
    }

    /// The changes of one `changes` text (its UTF-8 bytes), in order: both element forms of
    /// `encode`; elements it does not understand (from a later version) are skipped.
    /// Read element by element: a transaction of 1,000,000 events is as many elements, whose
    /// tree, parsed whole, took about 600 bytes each (`storectl watch` peaked at 741 MB while
    /// such a sync committed).
    static func changes(in utf8: Data) -> [Change] {
        var changes: [Change] = []
        do {
            // The store's own text: an element of grouped keys may name a whole sync's keys.
            try JSONParser.read(utf8, maximumValues: .max) { parser in
                try parser.forEachElement { _, parser in
                    changes.append(contentsOf: Change.changes(inLogElement: try parser.readValue()))
                }
            }
        } catch {
            return []
        }
        return changes
    }

    func latestTransaction() throws -> Int64 {
        try db.query("SELECT coalesce(max(tx), 0) FROM change_log") { $0.int64(0) }[0]
    }

    /// Each change logged after `transaction`, in order, one transaction's changes at a time
    /// (a publish after thousands of transactions holds no list of them all).
    func forEachChange(after transaction: Int64, _ body: (Change) throws -> Void) throws {
        try db.forEachRow("SELECT changes FROM change_log WHERE tx > ? ORDER BY tx", [.integer(transaction)]) { row in
            for change in Self.changes(in: row.utf8Data(0)) { try body(change) }
        }
    }

    /// Logged transactions after `transaction`, in order.
    func batches(after transaction: Int64) throws -> [ChangeBatch] {
        try db.query("SELECT tx, changes FROM change_log WHERE tx > ? ORDER BY tx", [.integer(transaction)]) { row in
            ChangeBatch(transaction: row.int64(0), changes: Self.changes(in: row.utf8Data(1)))
        }
    }
}
