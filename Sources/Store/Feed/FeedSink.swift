import Foundation

/// Receives a feed's valid records one at a time, in document order, as `FeedValidator` reads
/// them: sync's `Reconciler` applies each inside the write transaction; `FeedCollector` keeps
/// them in a `Feed`. A sink that throws stops the read, and its error is rethrown as is.
protocol FeedSink {
    mutating func receive(_ framework: Framework) throws
    mutating func receive(_ order: Order) throws
    mutating func receive(_ event: Event) throws
    mutating func receive(_ image: FeedImage) throws
    /// A record of a registered app kind (`Store.Configuration.recordTypes`).
    mutating func receive(record: any StoreRecord) throws
    /// A key of the feed's `deleted` member (a url for images, resolved against its page).
    mutating func receiveTombstone(_ key: String, kind: RecordKind) throws
}

/// Collects a feed's records into a `Feed` value (for `Feed.decode` and tests).
struct FeedCollector: FeedSink {
    var feed = Feed()

    mutating func receive(_ framework: Framework) { feed.frameworks.append(framework) }
    mutating func receive(_ order: Order) { feed.orders.append(order) }
    mutating func receive(_ event: Event) { feed.events.append(event) }
    mutating func receive(_ image: FeedImage) { feed.images.append(image) }
    mutating func receive(record: any StoreRecord) { feed.appRecords.append(record) }
    mutating func receiveTombstone(_ key: String, kind: RecordKind) { feed.deleted[kind].append(key) }
}
