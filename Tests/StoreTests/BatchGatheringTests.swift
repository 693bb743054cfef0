import Testing

@testable import Store

/// `BatchGathering`: how many writes a batch under `.full` waits for, from the batch before.
@Suite("BatchGathering")
struct BatchGatheringTests {
    @Test("a fresh writer gathers nothing")
    func freshGathersNothing() {
        #expect(BatchGathering().goal(upTo: 1_000) == 0)
    }

    /// (largest batch, writes answered, writes queued behind them, the next batch's goal)
    @Test(
        "the writes answered and those queued behind them are both expected, up to the largest batch",
        arguments: [
            (1_000, 1, 0, 0), // a lone writer is not held
            (1_000, 8, 0, 8),
            (1_000, 4, 4, 8), // two groups of 4 (one queued while the other's commit synced) join again
            (1_000, 1, 1, 2), // a lone writer with one write queued behind it: two are worth waiting for
            (5, 5, 40, 5), // never more than one transaction may hold
            (1, 1, 7, 0), // one write per transaction (group commit off): nothing to gather
        ])
    func goalAfterABatch(largest: Int, answered: Int, queued: Int, goal: Int) {
        var gathering = BatchGathering()
        gathering.batchEnded(answering: answered, queued: queued)
        #expect(gathering.goal(upTo: largest) == goal)
    }

    @Test("an idle writer forgets what it expected")
    func idleForgets() {
        var gathering = BatchGathering()
        gathering.batchEnded(answering: 8, queued: 3)
        #expect(gathering.goal(upTo: 1_000) == 11)
        gathering.wentIdle()
        #expect(gathering.goal(upTo: 1_000) == 0)
    }
}
