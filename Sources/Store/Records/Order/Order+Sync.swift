import Foundation

// How sync compares orders: the table's part of the reconciler and the record's hash.

extension OrderTable: SyncedTable {
    var database: Database { db }
    static var kind: RecordKind { .order }
    static func key(of record: Order) -> String { record.id }
    static func hash(of record: Order) -> UInt64 { RecordHash.of(record) }

    /// `SyncedTable.compare`, with the stored order read as it is (`find(_:validating:)`): an
    /// order a write would refuse, changed around the store, compares as different from the
    /// feed's, so a sync that may update it repairs it (it failed the sync before).
    func compare(_ order: Order, stream: Int64) throws -> LocalComparison? {
        guard let local = try find(order.id, validating: false) else { return nil }
        let received = try SyncStateTable(db: database).receivedHash(stream: stream, key: order.id)
        return LocalComparison(equal: Self.hash(of: local) == Self.hash(of: order), received: received)
    }
}

extension RecordHash {
    static func of(_ order: Order) -> UInt64 {
        var hash = RecordHash()
        hash.add(order.id)
        hash.add(Timestamp.milliseconds(order.placedAt))
        hash.add(Int64(order.items.count))
        for item in order.items {
            hash.add(item.itemName)
            hash.add(item.price.minorUnits)
            hash.add(Int64(item.aisle))
            hash.add(Int64(item.quantity))
        }
        return hash.value
    }
}
