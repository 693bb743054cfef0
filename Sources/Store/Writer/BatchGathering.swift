/// How many writes the writer's next batch waits for under durability `.full`, learned from
/// the batch before it (see `DatabaseWriter.runNextBatch`).
///
/// After a commit the writer expects as many writes as it is about to answer (their callers,
/// answered, usually write again within microseconds) plus those already queued behind the
/// commit. Counting the queued ones is what lets a split heal: 8 writers split into two groups of
/// 4 (one group's writes arriving while the other's commit syncs, after a caller was late once)
/// would otherwise alternate batches of 4 for good, each batch's goal met by the writes already
/// queued, at two syncs where one would do. Measured in `Benchmarks/Profiles/concurrent-writes.md`.
///
/// The cost: writes from callers that do not write again (each task writes once) are waited
/// for in vain, until the batch's deadline (half the last commit, at most 5 ms), which the last
/// size alone also did whenever fewer writes were queued than the last batch held.
struct BatchGathering: Sendable {
    /// The writes expected soon; 0 when nothing is expected (a fresh or idle writer).
    private(set) var expectedWrites = 0

    /// How many writes the next batch gathers before it commits, at most `maximumBatchSize` (the
    /// most one transaction may hold), or 0 for no gathering: a lone writer is not held (there
    /// is nobody to wait for), nor is a write that must commit alone.
    func goal(upTo maximumBatchSize: Int) -> Int {
        let goal = min(expectedWrites, maximumBatchSize)
        return goal > 1 ? goal : 0
    }

    /// A batch of `answered` writes has committed (or failed) and `queued` more wait in the
    /// mailbox; its callers are about to be answered.
    mutating func batchEnded(answering answered: Int, queued: Int) {
        expectedWrites = answered + queued
    }

    /// Nothing came by the deadline: the burst is over, and the next write, whenever it comes,
    /// is not held for writers that stopped.
    mutating func wentIdle() {
        expectedWrites = 0
    }
}
