import Foundation

/// The sink of sync's reader thread (`FeedPipeline`): decodes and hashes each valid record the
/// validator hands it, collects them in a `FeedBatch`, and sends each full batch to the writer's
/// thread through `handOff`. Throws `FeedPipeline.Stopped` once the writer has stopped.
struct FeedBatchSink: FeedSink {
    private let handOff: FeedHandOff
    private let batchSize: Int
    private var batch = FeedBatch()
    /// Keys a later file of this sync holds again (see `SupersededKeys`): their records in the
    /// file being read (of group `group`) are decoded, so checked, but not applied.
    var superseded = SupersededKeys()
    var group = 0

    init(handOff: FeedHandOff, batchSize: Int) {
        self.handOff = handOff
        self.batchSize = max(1, batchSize)
    }

    mutating func receive(_ fields: inout FeedFields, of handler: any RecordKindHandler) throws {
        if !superseded.isEmpty, try superseded.isSuperseded(handler.kind, fields.key, inGroup: group) {
            var checkedOnly = FeedBatch()
            handler.decode(&fields, into: &checkedOnly)
            return
        }
        handler.decode(&fields, into: &batch)
        if batch.count >= batchSize || batch.imageBytes >= FeedPipeline.batchImageBytes { try flush() }
    }

    mutating func receiveTombstone(_ key: String, of handler: any RecordKindHandler) throws {
        if !superseded.isEmpty, try superseded.isSuperseded(handler.kind, key, inGroup: group) { return }
        batch.appendTombstone(key, of: handler)
        if batch.count >= batchSize { try flush() }
    }

    func checkStopped() throws {
        if handOff.isStopped { throw FeedPipeline.Stopped() }
    }

    /// Sends what the batch holds, if anything, and starts a new one.
    mutating func flush() throws {
        guard batch.count > 0 else { return }
        var full = FeedBatch()
        swap(&full, &batch)
        guard handOff.send(full) else { throw FeedPipeline.Stopped() }
    }
}
