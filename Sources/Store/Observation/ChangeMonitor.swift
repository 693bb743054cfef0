import Foundation

/// Learns of committed transactions from the change log and tells subscribers.
///
/// In this process the writer pokes it right after each commit; changes committed by other
/// processes on the same file are found by polling the log (every `pollInterval`, so they reach
/// observers well within a second). It runs only while someone subscribes: the last
/// unsubscription stops the polling, and closing the store finishes every subscription.
///
/// Polling and reading the log never wait for Swift's cooperative pool: the timer fires on a
/// serial queue of the monitor's own and the log is read on a reader's queue, so an app that
/// blocks the pool's threads (or a busy machine) delays delivery to its own consumers, never
/// the detection of a commit.
final class ChangeMonitor: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every mutable property below is read and written only
    // while `lock` is held; subscriber callbacks (AsyncStream continuations, which are
    // Sendable) are called under the lock and never block.
    private let lock = NSLock()
    /// Nil until `attach(_:)`, which the store calls as it opens (the writer needs the monitor
    /// before the reads the monitor needs exist).
    private var changeLog: ChangeLogAccess?
    private var subscribers: [Int: Subscriber] = [:]
    private var nextID = 0
    private var lastSeen: Int64 = 0
    /// The most recent transaction committed by this store's writer, and the one it is
    /// committing (announced by `willCommit`, committed once `poke` follows).
    private var latestLocal: Int64 = 0
    private var committing: Int64 = 0
    private var isChecking = false
    private var needsAnotherCheck = false
    private var pollTimer: (any DispatchSourceTimer)?
    private let pollQueue = DispatchQueue(label: "store.change-monitor")
    private var closed = false
    private let pollInterval: Duration

    struct Subscriber {
        /// Transactions up to this one were committed before the subscription: not delivered.
        /// Nil until it is read, just after the subscription (see `subscribe`).
        var startTransaction: Int64?
        /// Transactions committed by this store's writer after the subscription while its start
        /// was being read: delivered even when the start, read after them, includes them.
        var committedSince: Set<Int64> = []
        /// Batches read before the start was known, delivered (those it wants) once it is.
        var held: [ChangeBatch] = []
        /// The latest transaction offered to it (its start at first): the next one offered
        /// should follow it. One further on means the log was pruned past the ones between
        /// before they were read (`ChangeBatch.missedTransactions`).
        var lastOffered: Int64 = 0
        let deliver: @Sendable (ChangeBatch) -> Void
        let finish: @Sendable () -> Void

        func wants(_ batch: ChangeBatch) -> Bool {
            guard let startTransaction else { return false }
            return batch.transaction > startTransaction || committedSince.contains(batch.transaction)
        }

        /// Delivers a batch it wants, saying how many transactions before it were missed.
        mutating func offer(_ batch: ChangeBatch) {
            var missed: Int64 = 0
            if batch.transaction > lastOffered + 1 { missed = batch.transaction - lastOffered - 1 }
            lastOffered = max(lastOffered, batch.transaction)
            deliver(
                missed == 0
                    ? batch : ChangeBatch(transaction: batch.transaction, changes: batch.changes, missedTransactions: missed))
        }
    }

    init(pollInterval: Duration) {
        self.pollInterval = pollInterval
    }

    deinit { pollTimer?.cancel() }

    func attach(_ changeLog: ChangeLogAccess) { lock.withLock { self.changeLog = changeLog } }

    /// The number of live subscriptions (for tests that check nothing leaks).
    var subscriberCount: Int { lock.withLock { subscribers.count } }

    /// Registers, at once, a subscriber that hears of every transaction committed from now on,
    /// and returns its id; if the store is closed, calls `finish` and returns nil.
    ///
    /// Registering synchronously is what makes "from now on" hold for this process: a write
    /// requested after this call commits after the registration, so its transaction is recorded
    /// in `committedSince` and delivered even if the start, read just after, already includes
    /// it. (Reading the start before registering would miss such a write.) A commit by another
    /// process is delivered if it comes after the start is read, a moment after the call.
    ///
    /// With `readsStart` false, the caller reads the start itself and passes it to
    /// `start(_:at:)` (an observation reads it in the snapshot of its first fetch); nothing is
    /// delivered before.
    func subscribe(
        readsStart: Bool = true,
        deliver: @escaping @Sendable (ChangeBatch) -> Void, finish: @escaping @Sendable () -> Void
    ) -> Int? {
        let registered = lock.withLock { () -> (Int, Int64)? in
            guard !closed, changeLog != nil else { return nil }
            // Nobody needs what was committed before: skip it (the start is read below).
            if subscribers.isEmpty { lastSeen = max(lastSeen, latestLocal) }
            let id = nextID
            nextID += 1
            subscribers[id] = Subscriber(startTransaction: nil, deliver: deliver, finish: finish)
            if pollTimer == nil { pollTimer = makePollTimer() }
            return (id, lastSeen)
        }
        guard let (id, fallback) = registered else {
            finish()
            return nil
        }
        if readsStart {
            Task { await self.readStart(id, fallback: fallback) }
        }
        return id
    }

    /// Reads the change log's latest transaction and makes it subscriber `id`'s start: from
    /// then on every commit, by any process, is delivered to it.
    func readStart(_ id: Int, fallback: Int64? = nil) async {
        let changeLog = lock.withLock { self.changeLog }
        let start = try? await changeLog?.latestTransaction()
        self.start(id, at: start ?? fallback ?? lock.withLock { lastSeen })
    }

    /// Sets a subscriber's start and delivers what it wants of the batches held meanwhile.
    func start(_ id: Int, at transaction: Int64) {
        lock.withLock {
            guard var subscriber = subscribers[id] else { return }
            subscriber.startTransaction = transaction
            subscriber.lastOffered = transaction
            subscriber.committedSince = subscriber.committedSince.filter { $0 <= transaction }
            let held = subscriber.held
            subscriber.held = []
            for batch in held where subscriber.wants(batch) { subscriber.offer(batch) }
            subscribers[id] = subscriber
            // When no subscriber wants anything up to the start (a lone subscriber, say, with no
            // commit of this store meanwhile), the log up to there is not read at all.
            let nobodyWantsEarlier = subscribers.values.allSatisfy { other in
                guard let otherStart = other.startTransaction, otherStart >= transaction else { return false }
                return !other.committedSince.contains { $0 > lastSeen }
            }
            if nobodyWantsEarlier { lastSeen = max(lastSeen, transaction) }
        }
    }

    func unsubscribe(_ id: Int) {
        lock.withLock {
            subscribers[id] = nil
            if subscribers.isEmpty {
                pollTimer?.cancel()
                pollTimer = nil
            }
        }
    }

    /// Called by the writer with a transaction's `change_log` tx just before committing it (so
    /// before any read can see it). Should the commit fail, the number is reused by a later
    /// transaction, which commits after the subscription too.
    func willCommit(_ transaction: Int64) {
        lock.withLock {
            committing = transaction
            for (id, subscriber) in subscribers where subscriber.startTransaction == nil {
                subscribers[id]?.committedSince.insert(transaction)
            }
        }
    }

    /// Called by the writer after a commit that logged changes.
    func poke() {
        let anyone = lock.withLock { () -> Bool in
            latestLocal = max(latestLocal, committing)
            return !subscribers.isEmpty
        }
        if anyone { check() }
    }

    /// Finishes every subscription; later subscriptions finish at once.
    func close() {
        let finished = lock.withLock { () -> [Subscriber] in
            closed = true
            pollTimer?.cancel()
            pollTimer = nil
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for subscriber in finished { subscriber.finish() }
    }

    /// The poll interval in nanoseconds, from 1 ms to a year: `.seconds(10_000_000_000)` (meant
    /// as "never") overflowed the multiplication and trapped at the first observation.
    static func timerNanoseconds(_ interval: Duration) -> Int {
        let year: Int64 = 365 * 86_400
        let seconds = min(max(interval.components.seconds, 0), year)
        let nanoseconds =
            seconds * 1_000_000_000 + (seconds == year ? 0 : max(interval.components.attoseconds, 0) / 1_000_000_000)
        return Int(max(nanoseconds, 1_000_000))
    }

    /// A timer on the monitor's own queue. It holds the monitor weakly; the monitor cancels it
    /// when the last subscriber leaves, on close, or when it is released.
    private func makePollTimer() -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: pollQueue)
        let nanoseconds = Self.timerNanoseconds(pollInterval)
        timer.schedule(
            deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
            leeway: .nanoseconds(nanoseconds / 10))
        timer.setEventHandler { [weak self] in self?.check() }
        timer.resume()
        return timer
    }

    /// Reads the log past the last transaction seen and delivers it. Never runs twice at once:
    /// a check asked for meanwhile makes the running one go round again. Returns at once; the
    /// read runs on a reader's queue.
    private func check() {
        let proceed = lock.withLock { () -> Bool in
            if isChecking { needsAnotherCheck = true; return false }
            isChecking = true
            return true
        }
        if proceed { readAndDeliver() }
    }

    private func readAndDeliver() {
        let (changeLog, after) = lock.withLock { (self.changeLog, lastSeen) }
        guard let changeLog else { return finishCheck() }
        changeLog.batchesAfter(after) { [self] result in
            // A failed read (the store closing, say) is tried again at the next tick.
            if case .success(let batches) = result { deliver(batches) }
            finishCheck()
        }
    }

    private func deliver(_ batches: [ChangeBatch]) {
        lock.withLock {
            for batch in batches {
                for id in subscribers.keys {
                    guard var subscriber = subscribers[id] else { continue }
                    if subscriber.startTransaction == nil {
                        subscriber.held.append(batch)
                    } else if subscriber.wants(batch) {
                        subscriber.offer(batch)
                    }
                    subscribers[id] = subscriber
                }
                lastSeen = max(lastSeen, batch.transaction)
            }
        }
    }

    private func finishCheck() {
        let again = lock.withLock { () -> Bool in
            if needsAnotherCheck { needsAnotherCheck = false; return true }
            isChecking = false
            return false
        }
        if again { readAndDeliver() }
    }
}
