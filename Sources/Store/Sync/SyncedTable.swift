import Foundation

/// A table that sync reconciles record by record, and export reads in key order: each kind's
/// table but images' (which have their own rules). The reconciler is generic over it, so each kind's calls are direct.
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
    /// for that key in the stream (source and kind) with id `stream`; nil if there is no such
    /// record.
    func compare(_ record: Record, stream: Int64) throws -> LocalComparison?
    /// Every record, one at a time in key order (export, publish).
    func forEachRecord(_ body: (Record) throws -> Void) throws
}

/// How a stored record compares with the feed's.
struct LocalComparison {
    /// The stored record equals the feed's.
    let equal: Bool
    /// The hash received for this key from this source at the last sync, if any.
    let received: UInt64?
}

extension LocalComparison {
    /// Steps a compare query whose row is `(stored equals feed's, received hash)`, then resets
    /// it: nil when it returns no row (no stored record with that key).
    init?(stepping statement: Statement) throws {
        defer { statement.reset() }
        guard try statement.step() else { return nil }
        equal = statement.int64(0) == 1
        received = statement.isNull(1) ? nil : UInt64(bitPattern: statement.int64(1))
    }
}
