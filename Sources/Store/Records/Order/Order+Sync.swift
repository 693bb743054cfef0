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
    ///
    /// Compared field by field (`isSame`), as frameworks and events are, never by the record
    /// hash: two different orders with the same 64-bit hash are cheap to make, and a feed could
    /// otherwise have its change reported unchanged and not applied.
    func compare(_ order: Order, stream: Int64) throws -> LocalComparison? {
        guard let local = try find(order.id, validating: false) else { return nil }
        let received = try SyncStateTable(db: database).receivedHash(stream: stream, key: order.id)
        return LocalComparison(equal: Self.isSame(local, order), received: received)
    }

    /// Whether two orders are the same as the store keeps them: id and item names byte for byte
    /// (as SQLite compares text; `String`'s `==` also equates canonically equivalent text,
    /// which is stored differently), `placedAt` to the millisecond, and every item's fields,
    /// the items in order.
    static func isSame(_ a: Order, _ b: Order) -> Bool {
        guard a.id.utf8.elementsEqual(b.id.utf8),
            Timestamp.milliseconds(a.placedAt) == Timestamp.milliseconds(b.placedAt),
            a.items.count == b.items.count
        else { return false }
        return zip(a.items, b.items).allSatisfy { x, y in
            x.itemName.utf8.elementsEqual(y.itemName.utf8) && x.price == y.price && x.aisle == y.aisle
                && x.quantity == y.quantity
        }
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
