import Foundation

/// Learns of committed transactions from the change log and tells subscribers.
///
/// In this process the writer pokes it right after each commit; changes committed by other
/// processes on the same file are found by polling the log (every `pollInterval`, so they reach
/// observers well within a second). It runs only while someone subscribes: the last
/// unsubscription stops the polling, and closing the store finishes every subscription.
final class ChangeMonitor: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every mutable property below is read and written only
    // while `lock` is held; subscriber callbacks (AsyncStream continuations, which are
    // Sendable) are called under the lock and never block.
    private let lock = NSLock()
    private weak var store: Store?
    private var subscribers: [Int: Subscriber] = [:]
    private var nextID = 0
    private var lastSeen: Int64 = 0
    private var isChecking = false
    private var needsAnotherCheck = false
    private var pollTask: Task<Void, Never>?
    private var closed = false
    private let pollInterval: Duration

    struct Subscriber {
        /// Transactions up to this one were committed before the subscription: not delivered.
        let startTransaction: Int64
        let deliver: @Sendable (ChangeBatch) -> Void
        let finish: @Sendable () -> Void
    }

    init(pollInterval: Duration) {
        self.pollInterval = pollInterval
    }

    func attach(_ store: Store) { lock.withLock { self.store = store } }

    /// The number of live subscriptions (for tests that check nothing leaks).
    var subscriberCount: Int { lock.withLock { subscribers.count } }

    /// Registers a subscriber that hears of every transaction committed from now on, and
    /// returns its id; `finish` is called at once if the store is closed.
    func subscribe(deliver: @escaping @Sendable (ChangeBatch) -> Void, finish: @escaping @Sendable () -> Void) async throws -> Int? {
        guard let store = lock.withLock({ store }) else { finish(); return nil }
        let start = try await store.read { try ChangeLogTable(db: $0).latestTransaction() }
        return lock.withLock { () -> Int? in
            if closed { finish(); return nil }
            if subscribers.isEmpty { lastSeen = max(lastSeen, start) }
            let id = nextID
            nextID += 1
            subscribers[id] = Subscriber(startTransaction: start, deliver: deliver, finish: finish)
            if pollTask == nil { pollTask = makePollTask() }
            return id
        }
    }

    func unsubscribe(_ id: Int) {
        lock.withLock {
            subscribers[id] = nil
            if subscribers.isEmpty {
                pollTask?.cancel()
                pollTask = nil
            }
        }
    }

    /// Called by the writer after a commit that logged changes.
    func poke() {
        guard lock.withLock({ !subscribers.isEmpty }) else { return }
        Task { await self.check() }
    }

    /// Finishes every subscription; later subscriptions finish at once.
    func close() {
        let finished = lock.withLock { () -> [Subscriber] in
            closed = true
            pollTask?.cancel()
            pollTask = nil
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for subscriber in finished { subscriber.finish() }
    }

    private func makePollTask() -> Task<Void, Never> {
        let interval = pollInterval
        return Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, !Task.isCancelled else { return }
                await self.check()
            }
        }
    }

    /// Reads the log past the last transaction seen and delivers it. Never runs twice at once:
    /// a check asked for meanwhile makes the running one go round again.
    private func check() async {
        let proceed = lock.withLock { () -> Bool in
            if isChecking { needsAnotherCheck = true; return false }
            isChecking = true
            return true
        }
        guard proceed else { return }
        while true {
            let (store, after) = lock.withLock { (self.store, lastSeen) }
            if let store, let batches = try? await store.read({ try ChangeLogTable(db: $0).batches(after: after) }) {
                lock.withLock {
                    for batch in batches {
                        for subscriber in subscribers.values where batch.transaction > subscriber.startTransaction {
                            subscriber.deliver(batch)
                        }
                        lastSeen = max(lastSeen, batch.transaction)
                    }
                }
            }
            let again = lock.withLock { () -> Bool in
                if needsAnotherCheck { needsAnotherCheck = false; return true }
                isChecking = false
                return false
            }
            if !again { return }
        }
    }
}
