/// The consumer's side of `Store.observe(_:)`: each value is fetched when the consumer asks for
/// the next one, never ahead of it, so a slow consumer holds one pending signal, not a queue of
/// values (a consumer that stopped reading without ending its iteration used to hold a value
/// per burst of changes: 268 MB after 2,000 updates of a 5,000-record observation). It
/// subscribes to the store's changes at the first `next()`, not before: a stream never iterated
/// holds nothing (a subscription without a start would hold every batch read meanwhile).
///
/// An actor: `next()` may be called from any task. One iteration at a time is the stream's
/// rule; two at once wait on the one signal stream, which traps (AsyncStream's rule) rather
/// than corrupting anything.
actor ValueObservationCursor<Value: Sendable & Equatable> {
    private let store: Store
    private let observation: ValueObservation<Value>
    /// The subscription, from the first `next()` until the end.
    private var id: Int?
    /// Signals that something relevant changed; the newest one is buffered, so bursts
    /// coalesce. Read one iterator at a time (an iterator of the one stream per `next()`: its
    /// buffered signal waits in the stream between them).
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation
    /// The last value handed out; nil before the first.
    private var last: Value?
    private var started = false
    private var ended = false

    init(store: Store, observation: ValueObservation<Value>) {
        self.store = store
        self.observation = observation
        (signals, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Released with the stream, however it ends (the consumer dropped it, say).
    deinit {
        if let id { store.changeMonitor.unsubscribe(id) }
    }

    /// The current value first; then, once a change that may alter it has committed, the value
    /// fetched then, if it differs from the last one handed out. nil once the consuming task is
    /// cancelled or the store closes; throws a fetch's failure.
    func next() async throws -> Value? {
        guard !ended else { return nil }
        do {
            if !started {
                started = true
                return try await first()
            }
            var pending = signals.makeAsyncIterator()
            while await pending.next() != nil {
                if Task.isCancelled { break }
                let value = try await store.read(observation.fetch)
                if value != last {
                    last = value
                    return value
                }
            }
            return end()
        } catch is CancellationError {
            return end()
        } catch StoreError.closed {
            // The store closed while a fetch was under way: that ends the sequence, it is no
            // failure.
            return end()
        } catch {
            _ = end()
            throw error
        }
    }

    /// Subscribes, then fetches the first value and the last transaction it includes from one
    /// snapshot: every later transaction signals (none falls between the two).
    private func first() async throws -> Value? {
        let (observation, signal) = (observation, signal)
        let subscribed = store.changeMonitor.subscribe(
            readsStart: false,
            deliver: { batch in
                // Missed transactions may have changed the value: fetch it again.
                if batch.missedTransactions > 0 || batch.changes.contains(where: observation.isAffected) { signal.yield() }
            },
            finish: { signal.finish() })
        guard let subscribed else { return end() }
        id = subscribed
        let (value, start) = try await store.read { db in
            (try observation.fetch(db), try ChangeLogTable(db: db).latestTransaction())
        }
        store.changeMonitor.start(subscribed, at: start)
        last = value
        return value
    }

    private func end() -> Value? {
        ended = true
        if let id { store.changeMonitor.unsubscribe(id) }
        id = nil
        return nil
    }
}
