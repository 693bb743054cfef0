import Foundation

/// Everything the generic layers (validation, sync, export, publish, observation) need of one
/// kind of record, built once per kind: the built-in kinds each have their own (in their
/// folders under `Records/`), and every registered `StoreRecord` kind gets an `AppKindHandler`.
///
/// The layers hold a list of these (`RecordKinds.handlers(registering:)`) and never name a
/// kind. A record is decoded and applied inside its kind's own `apply`, with its type known, so
/// each kind's decoding and table statements run with no cast and no box per record.
protocol RecordKindHandler: Sendable {
    /// The record type.
    associatedtype Record: Sendable
    /// The kind: its plural names the feed's array, its `keyField` the key member.
    var kind: RecordKind { get }
    /// The tables change observation watches, the one holding the records first.
    var observedTables: [ObservedKindTable] { get }

    /// Reads and checks the record's key from its feed object (reporting problems in `fields`);
    /// nil when there is none valid. The default reads `id`.
    func readKey(_ fields: inout FeedFields) -> String?
    /// Checks a key of the feed's `deleted` member, reporting problems at `fields.path`; the key
    /// to delete, or nil. The default checks an id.
    func tombstoneKey(_ text: String, _ fields: inout FeedFields) -> String?
    /// Reads the record from its feed object, its key already read (`fields.key`); nil after
    /// reporting what was wrong.
    func decode(_ fields: inout FeedFields) -> Record?
    /// Decodes the record and, when it is valid, appends it with its `remoteHash(of:)` to `batch`
    /// (on sync's reader thread, `FeedPipeline`), to be applied by `reconcile(_:hash:with:)`.
    /// Implemented once below, for every kind: a requirement without generic parameters, so
    /// that each kind's copy is specialized (its decoding direct, its batch run typed).
    func decode(_ fields: inout FeedFields, into batch: inout FeedBatch)
    /// The content hash sync compares and keeps for a record, computed on the reader thread
    /// beside its decoding; nil when the kind computes its own as it applies it (images).
    func remoteHash(of record: Record) -> UInt64?
    /// Decodes the record only, for its problems (once the feed has one, nothing is applied).
    func check(_ fields: inout FeedFields)
    /// Decodes the record and, when it is valid, appends it to `feed`.
    func collect(_ fields: inout FeedFields, into feed: inout Feed)

    /// Applies a feed record inside sync's transaction, by the reconciler's rules; `hash` is its
    /// `remoteHash(of:)`, computed on the reader thread.
    func reconcile(_ record: Record, hash: UInt64?, with reconciler: inout Reconciler) throws
    /// Applies a tombstone inside sync's transaction.
    func tombstone(_ key: String, with reconciler: inout Reconciler) throws

    /// The number of stored records.
    func count(_ db: Database) throws -> Int
    /// Every stored record in the feed's shape, ordered by key, one at a time from a cursor.
    func forEachFeedValue(_ db: Database, includingData: Bool, _ body: (JSONValue) throws -> Void) throws
    /// The stored record with this key in the feed's shape, or nil.
    func feedValue(of key: String, in db: Database) throws -> JSONValue?
    /// The record in the feed's shape (for `Feed` values).
    func feedValue(of record: Record) -> JSONValue
}

extension RecordKindHandler {
    func readKey(_ fields: inout FeedFields) -> String? {
        guard let id = fields.string("id") else { return nil }
        if let reason = RecordValidation.problem(withID: id) {
            fields.problem("id", "\(FeedFields.quote(id)) \(reason)")
            return nil
        }
        return id
    }

    func tombstoneKey(_ text: String, _ fields: inout FeedFields) -> String? {
        if let reason = RecordValidation.problem(withID: text) {
            fields.problem("", "\(FeedFields.quote(text)) \(reason)")
            return nil
        }
        return text
    }

    func decode(_ fields: inout FeedFields, into batch: inout FeedBatch) {
        guard let record = decode(&fields), fields.problemCount == 0 else { return }
        batch.append(record, hash: remoteHash(of: record), of: self)
    }

    func remoteHash(of record: Record) -> UInt64? { nil }

    func check(_ fields: inout FeedFields) { _ = decode(&fields) }

    func collect(_ fields: inout FeedFields, into feed: inout Feed) {
        guard let record = decode(&fields), fields.problemCount == 0 else { return }
        feed.append(record, kind: kind, feedValue: feedValue(of: record))
    }

    func count(_ db: Database) throws -> Int {
        try db.query("SELECT count(*) FROM \(observedTables[0].observed.table)") { $0.int(0) }[0]
    }
}

/// The kinds a store knows, listed once: the built-in ones, in the feed's order, then the app's.
enum RecordKinds {
    /// The built-in kinds' handlers.
    static let builtIn: [any RecordKindHandler] = [FrameworkKind(), OrderKind(), EventKind(), ImageKind()]

    /// The built-in kinds and the registered app kinds (`Store.Configuration.recordTypes`), in order.
    static func handlers(registering recordTypes: [any StoreRecord.Type]) -> [any RecordKindHandler] {
        builtIn + recordTypes.map { handler(for: $0) }
    }

    private static func handler<R: StoreRecord>(for type: R.Type) -> any RecordKindHandler { AppKindHandler<R>() }
}

/// An app's kind (a `StoreRecord`), read, synced and exported through its `RecordTable`.
struct AppKindHandler<R: StoreRecord>: TableBackedKind {
    var kind: RecordKind { R.kind }
    var observedTables: [ObservedKindTable] {
        R.observedTables.map { ObservedKindTable(R.kind, $0, holdsRecords: $0.table == R.table) }
    }

    /// The app's `decode`; a nil it returns without naming a problem is one all the same (the
    /// record was dropped from the sync without a word). (`columnValues` of the wrong length
    /// fail the record's first statement: `RecordTable`.)
    func decode(_ fields: inout FeedFields) -> R? {
        let problems = fields.problemCount
        let record = R.decode(&fields)
        if record == nil, fields.problemCount == problems {
            fields.problem("", "refused by the kind's decode, which named no field")
        }
        return record
    }
    func table(_ db: Database) -> RecordTable<R> { db.records(R.self) }
    func count(_ db: Database) throws -> Int { try db.records(R.self).count() }
    func feedValue(of record: R) -> JSONValue { record.feedValue }

    // Export and publish write what the app's `feedValue` gives: checked first, so that no file
    // the store writes is one its clients refuse (`.number("inf")` made an invalid snapshot)
    // or files a record under another key.
    func forEachFeedValue(_ db: Database, includingData: Bool, _ body: (JSONValue) throws -> Void) throws {
        try table(db).forEachRecord { try body(try checkedFeedValue(of: $0)) }
    }

    func feedValue(of key: String, in db: Database) throws -> JSONValue? {
        try table(db).find(key).map { try checkedFeedValue(of: $0) }
    }

    private func checkedFeedValue(of record: R) throws -> JSONValue {
        let value = record.feedValue
        let keyField = R.kind.keyField
        guard case .string(let key)? = value[keyField], key == record.key else {
            throw StoreError.invalidRecord(
                kind: R.kind, key: record.key, field: keyField,
                reason: "the kind's feedValue must be an object holding the record's key as its \(keyField)")
        }
        if let (path, text) = value.firstInvalidNumber(at: "") {
            throw StoreError.invalidRecord(
                kind: R.kind, key: record.key, field: path,
                reason: "the kind's feedValue holds \(FeedFields.quote(text)), which is no JSON number")
        }
        let limit = JSONParser.defaultMaximumValues
        if value.innerValueCount(upTo: limit + 1) > limit {
            throw StoreError.invalidRecord(
                kind: R.kind, key: record.key, field: "",
                reason: "the kind's feedValue holds more than \(limit) JSON values, more than a feed record may hold: "
                    + "every client would refuse it")
        }
        return value
    }
}
