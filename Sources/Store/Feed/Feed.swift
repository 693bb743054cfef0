import Foundation

/// A feed (<doc:FeedFormat>, version 1), parsed and validated, with every page merged in order.
public struct Feed: Sendable, Equatable {
    public var frameworks: [Framework] = []
    public var orders: [Order] = []
    public var events: [Event] = []
    public var images: [FeedImage] = []
    /// Records of the app kinds the feed was read with (`recordTypes`), in document order.
    public var appRecords: [any StoreRecord] = []
    public var deleted = FeedTombstones()

    public init() {}

    /// The number of records and tombstones, for progress and reports.
    public var recordCount: Int {
        frameworks.count + orders.count + events.count + images.count + appRecords.count + deleted.count
    }

    /// App records compare by kind and feed shape (a `StoreRecord` need not be Equatable).
    public static func == (lhs: Feed, rhs: Feed) -> Bool {
        lhs.frameworks == rhs.frameworks && lhs.orders == rhs.orders && lhs.events == rhs.events
            && lhs.images == rhs.images && lhs.deleted == rhs.deleted
            && lhs.appRecords.map { type(of: $0).kind } == rhs.appRecords.map { type(of: $0).kind }
            && lhs.appRecords.map(\.feedValue) == rhs.appRecords.map(\.feedValue)
    }
}

/// An image entry of a feed.
public struct FeedImage: Sendable, Equatable {
    /// The cache key: the feed's url, resolved against the page's own URL when relative.
    public var url: String
    /// Inline bytes; when nil, the bytes are downloaded from `url` if not already cached.
    public var data: Data?
    public var contentType: String?
    /// Where the bytes are downloaded from: `url` resolved against the page it came from.
    var location: URL?
    /// For an image of a local feed: the feed's folder, the only place `location` may be read from.
    var folder: URL?

    public init(url: String, data: Data? = nil, contentType: String? = nil) {
        self.url = url
        self.data = data
        self.contentType = contentType
        self.location = URL(string: url)
    }
}

/// The feed's `deleted` member: keys to remove, per kind.
public struct FeedTombstones: Sendable, Equatable {
    public var frameworks: [String] = []
    public var orders: [String] = []
    public var events: [String] = []
    public var images: [String] = []
    /// Keys of app kinds, per kind.
    public var appKinds: [RecordKind: [String]] = [:]

    public init() {}

    public var count: Int {
        frameworks.count + orders.count + events.count + images.count + appKinds.values.map(\.count).reduce(0, +)
    }

    subscript(kind: RecordKind) -> [String] {
        get {
            switch kind {
            case .framework: frameworks
            case .order: orders
            case .event: events
            case .image: images
            default: appKinds[kind] ?? []
            }
        }
        set {
            switch kind {
            case .framework: frameworks = newValue
            case .order: orders = newValue
            case .event: events = newValue
            case .image: images = newValue
            default: appKinds[kind] = newValue
            }
        }
    }
}

extension Feed {
    /// Parses and validates one feed page (its `next` link is not followed): the checks sync
    /// makes as it applies records, whose failure rolls a sync back. Throws
    /// `FeedValidationError` listing every problem, each named with `source` and its JSON path.
    /// Records of `recordTypes` (an app's kinds) are read too, into `appRecords`.
    public static func decode(
        _ data: Data, source: String = "feed",
        pageURL: URL = URL(string: "https://feed.invalid/feed.json")!,
        recordTypes: [any StoreRecord.Type] = []
    ) throws -> Feed {
        var validator = FeedValidator(recordTypes: recordTypes)
        var collector = FeedCollector()
        try validator.add(data, source: source, pageURL: pageURL, into: &collector)
        try validator.finish()
        return collector.feed
    }
}
