import Foundation

/// Receives a feed's valid records one at a time, in document order, as `FeedValidator` reads
/// them: sync's `Reconciler` applies each inside the write transaction; `FeedCollector` keeps
/// them in a `Feed`. A sink that throws stops the read, and its error is rethrown as is.
protocol FeedSink {
    /// A valid record, with the handler of its kind (which applies it, for sync).
    mutating func receive<Handler: RecordKindHandler>(_ record: Handler.Record, of handler: Handler) throws
    /// A key of the feed's `deleted` member (a url for images, resolved against its page).
    mutating func receiveTombstone(_ key: String, of handler: any RecordKindHandler) throws
}

/// Collects a feed's records into a `Feed` value (for `Feed.decode` and tests).
struct FeedCollector: FeedSink {
    var feed = Feed()

    mutating func receive<Handler: RecordKindHandler>(_ record: Handler.Record, of handler: Handler) {
        feed.append(record, kind: handler.kind, feedValue: handler.feedValue(of: record))
    }

    mutating func receiveTombstone(_ key: String, of handler: any RecordKindHandler) {
        feed.deleted[handler.kind].append(key)
    }
}
