extension Store {
    /// Observes a query as an `AsyncSequence` of its values.
    ///
    /// The protocol of this sequence:
    /// - **First** it emits the current value.
    /// - **Then** it emits after each committed transaction (in this process or in another
    ///   process on the same file) that may have changed the value, never for a rolled-back one.
    ///   Bursts of commits may be coalesced into one fetch, but the value after the last commit
    ///   is always delivered. A value equal to the previous one is not emitted again.
    /// - **Failure**: a change never makes it fail. If a fetch fails (a disk error, say), the
    ///   sequence ends by throwing that error.
    /// - **End**: it finishes when the consuming task is cancelled or the store is closed.
    /// - **Cancellation** releases everything it held: its registration with the store and the
    ///   read connection (connections are only borrowed for each fetch).
    /// - **Fetching on demand**: a value is fetched when the consumer asks for the next one,
    ///   never ahead of it: a slow consumer skips the values it was too slow to see and gets the
    ///   latest, and one that stops reading holds nothing but a pending signal (constant memory).
    ///   The first fetch, and the registration with the store, happen at the first `next()`:
    ///   a stream never iterated holds nothing.
    public func observe<Value>(_ observation: ValueObservation<Value>) -> AsyncThrowingStream<Value, any Error> {
        let cursor = ValueObservationCursor(store: self, observation: observation)
        return AsyncThrowingStream(unfolding: { try await cursor.next() })
    }

    /// Every committed transaction that changed records of `kinds` (by default every kind the
    /// change log holds: the built-in ones, the registered `recordTypes`, and an app's kind that
    /// another process on the same file logs without this store knowing its type, as
    /// `storectl watch` sees an app's records), in order, as it commits here or in another
    /// process on the same file.
    ///
    /// Protocol: emits one `ChangeBatch` per committed transaction (never for a rolled-back
    /// one): every transaction this process commits after the call, and every one another
    /// process commits once the stream's start is read, a moment after the call (use
    /// `changesFromNow(of:)` to wait for that moment); never fails; finishes when the consuming
    /// task is cancelled or the store is closed; cancelling removes its registration. Nothing
    /// is dropped, with one exception the batch itself says: transactions pruned from the
    /// change log (it keeps the last 10,000, and at most 64 MiB of them) before the store read them, counted in the next
    /// batch's `missedTransactions` (see there). Batches a consumer has not taken yet are buffered, without a bound, so a
    /// consumer that stops reading without ending its iteration (or dropping the stream) holds
    /// every later batch in memory.
    public func changes(of kinds: Set<RecordKind>? = nil) -> AsyncStream<ChangeBatch> {
        changeStream(of: kinds, readsStart: true).stream
    }

    /// `changes(of:)`, returned once the stream's start is read: every transaction committed
    /// after this returns, by this process or any other on the same file, is emitted. Same
    /// protocol otherwise. (`storectl watch` says "watching" only then.)
    public func changesFromNow(of kinds: Set<RecordKind>? = nil) async -> AsyncStream<ChangeBatch> {
        let (stream, id) = changeStream(of: kinds, readsStart: false)
        if let id { await changeMonitor.readStart(id) }
        return stream
    }

    /// `kinds` nil: every kind, none filtered out.
    private func changeStream(of kinds: Set<RecordKind>?, readsStart: Bool) -> (stream: AsyncStream<ChangeBatch>, id: Int?) {
        let (batches, sink) = AsyncStream<ChangeBatch>.makeStream()
        // Subscribed here, not in the task below, so that a commit right after this call is seen.
        let id = changeMonitor.subscribe(
            readsStart: readsStart,
            deliver: { batch in
                let relevant = kinds.map { kinds in batch.changes.filter { kinds.contains($0.kind) } } ?? batch.changes
                if !relevant.isEmpty || batch.missedTransactions > 0 {
                    sink.yield(
                        ChangeBatch(
                            transaction: batch.transaction, changes: relevant, missedTransactions: batch.missedTransactions))
                }
            },
            finish: { sink.finish() })
        let stream = AsyncStream<ChangeBatch> { continuation in
            guard let id else { return continuation.finish() }
            let task = Task {
                defer { changeMonitor.unsubscribe(id) }
                for await batch in batches {
                    if Task.isCancelled { break }
                    continuation.yield(batch)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return (stream, id)
    }

    /// Live subscriptions to this store's changes (for tests that check nothing leaks).
    var observerCount: Int { changeMonitor.subscriberCount }
}
