/// The consumer's side of `Store.observe(_:)`: each value is fetched when the consumer asks for
/// the next one, never ahead of it, so a slow consumer holds one pending signal, not a queue of
/// values (a consumer that stopped reading without ending its iteration used to hold a value
/// per burst of changes: 268 MB after 2,000 updates of a 5,000-record observation).
///
/// An actor: `next()` may be called from any task; one call at a time is the stream's rule, and
/// isolation keeps even a misuse memory-safe.
actor ValueObservationCursor<Value: Sendable & Equatable> {
    private let store: Store
    private let observation: ValueObservation<Value>
    private let id: Int
    /// Read one iterator at a time (an iterator of the one stream per `next()`: its buffered
    /// signal waits in the stream between them).
    private let signals: AsyncStream<Void>
    /// The last value handed out; nil before the first.
    private var last: Value?
    private var started = false
    private var ended = false

    init(store: Store, observation: ValueObservation<Value>, id: Int, signals: AsyncStream<Void>) {
        self.store = store
        self.observation = observation
        self.id = id
        self.signals = signals
    }

    /// Released with the stream, however it ends (the consumer dropped it, say).
    deinit { store.changeMonitor.unsubscribe(id) }

    /// The current value first; then, once a change that may alter it has committed, the value
    /// fetched then, if it differs from the last one handed out. nil once the consuming task is
    /// cancelled or the store closes; throws a fetch's failure.
    func next() async throws -> Value? {
        guard !ended else { return nil }
        do {
            if !started {
                started = true
                // The first value and the last transaction it includes, from one snapshot:
                // every later transaction signals.
                let observation = observation
                let (first, start) = try await store.read { db in
                    (try observation.fetch(db), try ChangeLogTable(db: db).latestTransaction())
                }
                store.changeMonitor.start(id, at: start)
                last = first
                return first
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

    private func end() -> Value? {
        ended = true
        store.changeMonitor.unsubscribe(id)
        return nil
    }
}
