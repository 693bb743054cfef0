import Foundation

/// A feed (<doc:FeedFormat>, version 1), parsed and validated, with every page merged in order.
///
/// Records of every kind are held in one list, in document order; each kind reads its own
/// through an extension (`feed.frameworks`, `feed.records(of: Reminder.self)`).
public struct Feed: Sendable, Equatable {
    /// Every record read, in document order, with its kind and its feed shape.
    private(set) var entries: [Entry] = []
    /// The keys of the feed's `deleted` member, per kind.
    public var deleted = FeedTombstones()

    /// One record of a feed.
    struct Entry: Sendable {
        let kind: RecordKind
        let record: any Sendable
        let feedValue: JSONValue
    }

    /// An empty feed.
    public init() {}

    /// The number of records and tombstones, for progress and reports.
    public var recordCount: Int { entries.count + deleted.count }

    /// The records of `type` (a built-in or an app kind), in document order.
    public func records<Record: Sendable>(of type: Record.Type) -> [Record] {
        entries.compactMap { $0.record as? Record }
    }

    /// Records of the app kinds the feed was read with (`recordTypes`), in document order.
    public var appRecords: [any StoreRecord] {
        entries.compactMap { entry in
            RecordKind.allCases.contains(entry.kind) ? nil : entry.record as? any StoreRecord
        }
    }

    mutating func append(_ record: any Sendable, kind: RecordKind, feedValue: JSONValue) {
        entries.append(Entry(kind: kind, record: record, feedValue: feedValue))
    }

    /// Feeds compare by kind and feed shape, record by record (a record need not be Equatable).
    public static func == (lhs: Feed, rhs: Feed) -> Bool {
        lhs.deleted == rhs.deleted && lhs.entries.map(\.kind) == rhs.entries.map(\.kind)
            && lhs.entries.map(\.feedValue) == rhs.entries.map(\.feedValue)
    }
}

/// The feed's `deleted` member: keys to remove, per kind (`deleted[.framework]`).
public struct FeedTombstones: Sendable, Equatable, CustomStringConvertible {
    /// The kinds with keys, in the order their first key came, and their keys.
    private var lists: [(kind: RecordKind, keys: [String])] = []

    /// No tombstone.
    public init() {}

    /// The number of keys, over every kind.
    public var count: Int { lists.reduce(0) { $0 + $1.keys.count } }

    /// The keys of one kind, in document order.
    public subscript(kind: RecordKind) -> [String] {
        get { lists.first { $0.kind == kind }?.keys ?? [] }
        set {
            if let index = lists.firstIndex(where: { $0.kind == kind }) {
                lists[index].keys = newValue
            } else if !newValue.isEmpty {
                lists.append((kind, newValue))
            }
        }
    }

    /// Each kind's keys, in order: `frameworks: [a, b]; events: [e1]`.
    public var description: String {
        lists.filter { !$0.keys.isEmpty }.map { "\($0.kind.plural): \($0.keys)" }.joined(separator: "; ")
    }

    /// The same keys per kind, whatever the order of the kinds.
    public static func == (lhs: FeedTombstones, rhs: FeedTombstones) -> Bool {
        let kinds = Set((lhs.lists + rhs.lists).map(\.kind))
        return kinds.allSatisfy { lhs[$0] == rhs[$0] }
    }
}

extension Feed {
    /// Parses and validates one feed page (its `next` link is not followed): the checks sync
    /// makes as it applies records, whose failure rolls a sync back. Throws
    /// `FeedValidationError` listing every problem, each named with `source` and its JSON path.
    /// Records of `recordTypes` (an app's kinds) are read too.
    public static func decode(
        _ data: Data, source: String = "feed",
        pageURL: URL = URL(string: "https://feed.invalid/feed.json")!,
        recordTypes: [any StoreRecord.Type] = []
    ) throws -> Feed {
        var validator = FeedValidator(kinds: RecordKinds.handlers(registering: recordTypes))
        var collector = FeedCollector()
        try validator.add(data, source: source, pageURL: pageURL, into: &collector)
        try validator.finish()
        return collector.feed
    }
}
