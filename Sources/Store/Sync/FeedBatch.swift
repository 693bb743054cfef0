import Foundation

/// A few hundred of a feed's valid records and tombstones, in feed order, decoded (and each
/// record hashed) on sync's reader thread, then applied by the writer's (`FeedPipeline`).
///
/// Records are kept in runs of one kind, each a typed array: a feed lists a kind's records
/// together, so a batch holds one run or a few, with no box per record.
struct FeedBatch {
    private var runs: [any FeedRun] = []
    /// Records and tombstones held.
    private(set) var count = 0
    /// The bytes of the images' inline data held: a batch of 256 images of 10 MB is 2.5 GB.
    private(set) var imageBytes = 0

    /// Appends a decoded record of `handler`'s kind with its content hash (`remoteHash(of:)`).
    mutating func append<Handler: RecordKindHandler>(_ record: Handler.Record, hash: UInt64?, of handler: Handler) {
        count += 1
        if Handler.Record.self == FeedImage.self, let image = record as? FeedImage { imageBytes += image.data?.count ?? 0 }
        if let run = runs.last as? RecordRun<Handler> {
            run.append(record, hash: hash)
            return
        }
        let run = RecordRun(handler)
        run.append(record, hash: hash)
        runs.append(run)
    }

    /// Appends a key of the feed's `deleted` member.
    mutating func appendTombstone(_ key: String, of handler: any RecordKindHandler) {
        count += 1
        if let run = runs.last as? TombstoneRun {
            run.keys.append((key, handler))
            return
        }
        let run = TombstoneRun()
        run.keys.append((key, handler))
        runs.append(run)
    }

    /// Applies everything, in order, inside sync's transaction; each record first checks whether
    /// the sync was cancelled (then the transaction stops here and is rolled back).
    func apply(to reconciler: inout Reconciler) throws {
        for run in runs { try run.apply(to: &reconciler) }
    }
}

/// A run of a batch: records of one kind, or tombstones.
private protocol FeedRun: AnyObject {
    func apply(to reconciler: inout Reconciler) throws
}

/// Records of one kind, with their hashes, in feed order.
private final class RecordRun<Handler: RecordKindHandler>: FeedRun {
    let handler: Handler
    private var records: [Handler.Record] = []
    private var hashes: [UInt64?] = []

    init(_ handler: Handler) { self.handler = handler }

    func append(_ record: Handler.Record, hash: UInt64?) {
        records.append(record)
        hashes.append(hash)
    }

    func apply(to reconciler: inout Reconciler) throws {
        for index in records.indices {
            try reconciler.db.checkCancellation()
            try handler.reconcile(records[index], hash: hashes[index], with: &reconciler)
        }
    }
}

/// Tombstones (of any kinds), in feed order.
private final class TombstoneRun: FeedRun {
    var keys: [(key: String, handler: any RecordKindHandler)] = []

    func apply(to reconciler: inout Reconciler) throws {
        for (key, handler) in keys {
            try reconciler.db.checkCancellation()
            try handler.tombstone(key, with: &reconciler)
        }
    }
}
