import Foundation

/// Receives a feed's valid records one at a time, in document order, as `FeedValidator` reads
/// them: sync's `FeedBatchSink` decodes them for the writer's thread (`FeedPipeline`);
/// `FeedCollector` keeps them in a `Feed`. A sink that throws stops the read, and its error is
/// rethrown as is.
protocol FeedSink {
    /// A record object read into `fields` (its key checked), to be decoded by its kind's
    /// `handler` and taken if valid; its problems are left in `fields`.
    mutating func receive(_ fields: inout FeedFields, of handler: any RecordKindHandler) throws
    /// A key of the feed's `deleted` member (a url for images, resolved against its page).
    mutating func receiveTombstone(_ key: String, of handler: any RecordKindHandler) throws
    /// Throws when the read should stop although no record reached the sink lately (once the
    /// feed has a problem, records are only checked): called every few records.
    func checkStopped() throws
}

extension FeedSink {
    /// A sink that never stops the read but by failing in `receive`.
    func checkStopped() throws {}
}

/// Collects a feed's records into a `Feed` value (for `Feed.decode` and tests).
struct FeedCollector: FeedSink {
    var feed = Feed()

    mutating func receive(_ fields: inout FeedFields, of handler: any RecordKindHandler) {
        handler.collect(&fields, into: &feed)
    }

    mutating func receiveTombstone(_ key: String, of handler: any RecordKindHandler) {
        feed.deleted[handler.kind].append(key)
    }
}
