import Foundation

/// A table that sync reconciles record by record: frameworks, orders and events (images have
/// their own rules). The reconciler is generic over it, so each kind's calls are direct.
protocol SyncedTable {
    associatedtype Record
    static var kind: RecordKind { get }
    static func key(of record: Record) -> String
    static func hash(of record: Record) -> UInt64
    func find(_ key: String) throws -> Record?
    func insert(_ record: Record) throws
    /// Inserts unless the key exists; true if inserted.
    func insertIfAbsent(_ record: Record) throws -> Bool
    func update(_ record: Record) throws
    func delete(_ key: String) throws -> Bool
}

extension FrameworkTable: SyncedTable {
    static var kind: RecordKind { .framework }
    static func key(of record: Framework) -> String { record.id }
    static func hash(of record: Framework) -> UInt64 { RecordHash.of(record) }
}

extension OrderTable: SyncedTable {
    static var kind: RecordKind { .order }
    static func key(of record: Order) -> String { record.id }
    static func hash(of record: Order) -> UInt64 { RecordHash.of(record) }
}

extension EventTable: SyncedTable {
    static var kind: RecordKind { .event }
    static func key(of record: Event) -> String { record.id }
    static func hash(of record: Event) -> UInt64 { RecordHash.of(record) }
}
