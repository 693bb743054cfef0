import Foundation

// How sync compares events: the table's part of the reconciler and the record's hash.

extension EventTable: SyncedTable {
    var database: Database { db }
    static var kind: RecordKind { .event }
    static func key(of record: Event) -> String { record.id }
    static func hash(of record: Event) -> UInt64 { RecordHash.of(record) }
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
