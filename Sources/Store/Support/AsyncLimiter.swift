/// At most `limit` holders at once; the others wait, first come first served. A waiter whose
/// task is cancelled stops waiting and throws `CancellationError`. Whoever `acquire()`d must
/// `release()` once.
actor AsyncLimiter {
    private let limit: Int
    private var held = 0
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextID: UInt64 = 0

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Holders now (for tests).
    var holders: Int { held }

    /// Waiters now (for tests).
    var waiting: Int { waiters.count }

    /// Returns once a place is free (at once if one is), or throws `CancellationError`.
    func acquire() async throws {
        try Task.checkCancellation()
        if held < limit {
            held += 1
            return
        }
        let id = nextID
        nextID += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // On the actor, before `cancel(_:)` can run: a cancellation that came first is
                // seen here, one that comes later finds the waiter queued.
                if Task.isCancelled { return continuation.resume(throwing: CancellationError()) }
                waiters.append((id, continuation))
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    /// Frees a place: handed to the longest waiter, if any (so `held` counts it still).
    func release() {
        if waiters.isEmpty {
            held = max(0, held - 1)
        } else {
            waiters.removeFirst().continuation.resume()
        }
    }

    private func cancel(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }
}
