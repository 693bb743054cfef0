import Foundation

// How sync compares events: the table's part of the reconciler and the record's hash.

extension EventTable: SyncedTable {
    var database: Database { db }
    static var kind: RecordKind { .event }
    static func key(of record: Event) -> String { record.id }
    static func hash(of record: Event) -> UInt64 { RecordHash.of(record) }

    /// One query, compared inside SQLite without reading the row into Swift (`IS`: notes may be
    /// null on both sides), as frameworks do.
    func compare(_ event: Event, stream: Int64) throws -> LocalComparison? {
        let statement = try db.cachedStatement(
            literal: """
                SELECT e.title = ?2 AND e.date = ?3 AND e.notes IS ?4, r.hash
                FROM events AS e
                LEFT JOIN sync_records AS r ON r.stream = ?5 AND r.key = e.id
                WHERE e.id = ?1
                """)
        try statement.bind(stream, at: 5)
        return try EventTable.withFields(of: event, boundTo: statement) { try LocalComparison(stepping: statement) }
    }
}

extension RecordHash {
    static func of(_ event: Event) -> UInt64 {
        var hash = RecordHash()
        hash.add(event.id)
        hash.add(event.title)
        hash.add(Int64(event.date.daysSinceEpoch))
        hash.add(event.notes)
        return hash.value
    }
}
