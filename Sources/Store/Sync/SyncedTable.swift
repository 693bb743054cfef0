import Foundation

/// A table that sync reconciles record by record: frameworks, orders and events (images have
/// their own rules). The reconciler is generic over it, so each kind's calls are direct.
protocol SyncedTable {
    associatedtype Record
    static var kind: RecordKind { get }
    var database: Database { get }
    static func key(of record: Record) -> String
    static func hash(of record: Record) -> UInt64
    func find(_ key: String) throws -> Record?
    func insert(_ record: Record) throws
    /// Inserts unless the key exists; true if inserted.
    func insertIfAbsent(_ record: Record) throws -> Bool
    func update(_ record: Record) throws
    func delete(_ key: String) throws -> Bool
    /// The stored record with this record's key compared with it, and the hash last received
    /// for that key from the source with id `sourceID`; nil if there is no such record.
    func compare(_ record: Record, sourceID: Int64) throws -> LocalComparison?
}

/// How a stored record compares with the feed's.
struct LocalComparison {
    /// The stored record equals the feed's.
    let equal: Bool
    /// The hash received for this key from this source at the last sync, if any.
    let received: UInt64?
}

extension SyncedTable {
    /// Compares through the record hash; tables override it with one query.
    func compare(_ record: Record, sourceID: Int64) throws -> LocalComparison? {
        guard let local = try find(Self.key(of: record)) else { return nil }
        let received = try SyncStateTable(db: database).receivedHash(sourceID: sourceID, kind: Self.kind, key: Self.key(of: record))
        return LocalComparison(equal: Self.hash(of: local) == Self.hash(of: record), received: received)
    }
}

extension FrameworkTable: SyncedTable {
    static var kind: RecordKind { .framework }
    static func key(of record: Framework) -> String { record.id }
    static func hash(of record: Framework) -> UInt64 { RecordHash.of(record) }
    var database: Database { db }

    /// One query, compared inside SQLite without reading the row into Swift. Text compares
    /// byte for byte (the BINARY collation), as the record hash does.
    func compare(_ framework: Framework, sourceID: Int64) throws -> LocalComparison? {
        let statement = try db.cachedStatement(literal: """
            SELECT f.name = ?2 AND f.image_name = ?3 AND f.url_string = ?4 AND f.description = ?5, r.hash
            FROM frameworks AS f
            LEFT JOIN sync_records AS r ON r.source_id = ?6 AND r.kind = 'framework' AND r.key = f.id
            WHERE f.id = ?1
            """)
        try statement.bind(sourceID, at: 6)
        return try Self.withFields(of: framework, boundTo: statement) {
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return LocalComparison(equal: statement.int64(0) == 1,
                                   received: statement.isNull(1) ? nil : UInt64(bitPattern: statement.int64(1)))
        }
    }
}

extension OrderTable: SyncedTable {
    var database: Database { db }
    static var kind: RecordKind { .order }
    static func key(of record: Order) -> String { record.id }
    static func hash(of record: Order) -> UInt64 { RecordHash.of(record) }
}

extension EventTable: SyncedTable {
    var database: Database { db }
    static var kind: RecordKind { .event }
    static func key(of record: Event) -> String { record.id }
    static func hash(of record: Event) -> UInt64 { RecordHash.of(record) }
}
