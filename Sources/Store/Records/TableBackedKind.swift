import Foundation

/// A kind whose records live in one `SyncedTable` type: frameworks, events, orders and every
/// app kind. The parts of its handler bound to that table (reconcile, tombstone, export, a
/// record's feed value by key) are written once here; a kind names its table and its feed shape.
/// Each conforming handler gets its own specialized copy (as `apply` does), so the table's
/// statements are called directly.
protocol TableBackedKind: RecordKindHandler {
    associatedtype Table: SyncedTable where Table.Record == Record
    /// The kind's table on `db`.
    func table(_ db: Database) -> Table
}

extension TableBackedKind {
    func remoteHash(of record: Record) -> UInt64? { Table.hash(of: record) }

    func reconcile(_ record: Record, hash: UInt64?, with reconciler: inout Reconciler) throws {
        let table = table(reconciler.db)
        try reconciler.reconcile(record, hash: hash ?? Table.hash(of: record), in: table)
    }

    func tombstone(_ key: String, with reconciler: inout Reconciler) throws {
        let table = table(reconciler.db)
        try reconciler.tombstone(key, in: table)
    }

    func forEachFeedValue(_ db: Database, includingData: Bool, _ body: (JSONValue) throws -> Void) throws {
        try table(db).forEachRecord { try body(feedValue(of: $0)) }
    }

    func feedValue(of key: String, in db: Database) throws -> JSONValue? {
        try table(db).find(key).map { feedValue(of: $0) }
    }
}
