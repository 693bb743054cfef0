/// The two reads of the change log the change monitor needs, handed to it by the store so the
/// monitor never holds the store itself (no `Store <-> ChangeMonitor` cycle).
struct ChangeLogAccess: Sendable {
    /// The latest transaction recorded in the change log (0 when it is empty), read in one
    /// snapshot.
    var latestTransaction: @Sendable () async throws -> Int64
    /// Reads the batches committed after a transaction and answers through the completion on a
    /// reader's queue, never waiting for Swift's cooperative pool.
    var batchesAfter:
        @Sendable (
            _ transaction: Int64, _ completion: @escaping @Sendable (Result<[ChangeBatch], any Error>) -> Void
        ) -> Void
}
