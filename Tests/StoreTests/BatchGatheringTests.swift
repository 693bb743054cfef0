import Testing

@testable import Store

/// `BatchGathering`: how many writes a batch under `.full` waits for, from the batch before.
@Suite("BatchGathering")
struct BatchGatheringTests {
    @Test("a fresh writer, and one that expects a single write, gathers nothing")
    func nothingToWaitFor() {
        var gathering = BatchGathering(maximumBatchSize: 1_000)
        #expect(gathering.goal == 0)
        gathering.batchEnded(answering: 1, queued: 0)
        #expect(gathering.goal == 0)
    }

    @Test("the writes answered and those queued behind them are both expected")
    func answeredAndQueued() {
        var gathering = BatchGathering(maximumBatchSize: 1_000)
        gathering.batchEnded(answering: 8, queued: 0)
        #expect(gathering.goal == 8)
        // Two groups of 4 (one queued while the other's commit synced) make one batch of 8 again.
        gathering.batchEnded(answering: 4, queued: 4)
        #expect(gathering.goal == 8)
        // A lone writer with one write queued behind it: two are worth waiting for.
        gathering.batchEnded(answering: 1, queued: 1)
        #expect(gathering.goal == 2)
    }

    @Test("the goal never exceeds the largest batch")
    func capped() {
        var gathering = BatchGathering(maximumBatchSize: 5)
        gathering.batchEnded(answering: 5, queued: 40)
        #expect(gathering.goal == 5)
        // One write per transaction (group commit off): there is never anything to gather.
        var off = BatchGathering(maximumBatchSize: 1)
        off.batchEnded(answering: 1, queued: 7)
        #expect(off.goal == 0)
    }

    @Test("an idle writer forgets what it expected")
    func idleForgets() {
        var gathering = BatchGathering(maximumBatchSize: 1_000)
        gathering.batchEnded(answering: 8, queued: 3)
        gathering.wentIdle()
        #expect(gathering.goal == 0)
    }
}
