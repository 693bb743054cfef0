import Foundation

/// The one writer of a store: an actor that owns the store's only read-write connection and
/// serializes every write.
///
/// Guarantees:
/// - every write runs in a transaction (`BEGIN IMMEDIATE`, so another process's writer is waited
///   for through the busy timeout, never surfaced as "database is locked" mid-transaction);
/// - a write that throws is rolled back and its error rethrown; nothing of it persists;
/// - a caller is answered only after its write has committed (or failed);
/// - writes that arrive while another is running are grouped into one transaction (group
///   commit), at most `maximumBatchSize` of them, each in its own savepoint, so one failing
///   write rolls back only itself (a batch size of 1 turns group commit off);
/// - an error that makes SQLite abort the whole transaction (a full disk, an I/O error) fails
///   every write of the batch;
/// - blocking SQLite calls run on this actor's own serial dispatch queue (its executor), never
///   on the cooperative pool;
/// - a write whose caller's task is cancelled before the write starts is not run (its caller
///   gets `CancellationError`); one already running sees the cancellation through
///   `Database.checkCancellation()`.
///
/// How a write travels: its caller posts it to the `mailbox` (a lock and an append) and
/// suspends, without hopping onto the actor; only a writer that was idle is woken, by one task
/// that enters the actor and drains. A drain takes the queued writes (up to
/// `maximumBatchSize`), runs them in one transaction, commits, and only then resumes their
/// callers, until none is queued. Writes requested while a batch runs queue up for the next,
/// so batches grow with the load.
actor DatabaseWriter {
    private let executor = SerialQueueExecutor(label: "store.writer")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var database: Database?
    /// Whether the change_log table exists (it does once migration 0006 ran); cached once true.
    private var hasChangeLog = false
    /// Writes requested and not yet taken by a drain.
    private let mailbox = WriteMailbox()

    /// The most writes committed in one transaction; 1 gives every write its own transaction.
    private let maximumBatchSize: Int
    /// Called with a transaction's `change_log` tx just before it is committed.
    private let willCommit: @Sendable (_ transaction: Int64) -> Void
    /// Called after each commit that changed records, with the changes.
    private let onCommit: @Sendable (ChangeList) -> Void
    private let now: @Sendable () -> Date
    /// How long BEGIN IMMEDIATE waits for another process's write lock, for the error that says so.
    private let busyTimeout: Duration
    /// Whether a batch waits a moment for the writers the last one answered (see `takeBatch`).
    private let gathersBatches: Bool
    /// How many writes the last batch held, and how long its COMMIT took (when gathering).
    private var lastBatchSize = 0
    private var lastCommitDuration: Duration = .zero

    /// Opens the connection and runs `prepare` on it (pragmas, migrations) before any write.
    init(
        path: String, options: Database.OpenOptions,
        maximumBatchSize: Int = .max,
        gathersBatches: Bool = false,
        observedTables: [ObservedKindTable] = ObservedKindTable.builtIn,
        now: @escaping @Sendable () -> Date,
        willCommit: @escaping @Sendable (_ transaction: Int64) -> Void,
        onCommit: @escaping @Sendable (ChangeList) -> Void,
        prepare: (Database) throws -> Void
    ) throws {
        let database = try Database(path: path, options: options)
        try prepare(database)
        database.collectChanges(of: observedTables)
        self.database = database
        self.now = now
        self.busyTimeout = options.busyTimeout
        self.maximumBatchSize = max(1, maximumBatchSize)
        self.gathersBatches = gathersBatches
        self.willCommit = willCommit
        self.onCommit = onCommit
    }

    /// Runs `body` on the writer connection outside any write batch (migrations, pragmas).
    func exclusive<T: Sendable>(_ body: (Database) throws -> T) throws -> T {
        guard let database else { throw StoreError.closed }
        return try body(database)
    }

    /// Runs `body` in a write transaction and returns its result once committed.
    nonisolated func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try Task.checkCancellation()
        let cancellation = CancellationFlag()
        return try await withTaskCancellationHandler {
            // Unsafe rather than checked: one allocation less per write, and the writer answers
            // every posted write exactly once (see `runNextBatch`).
            try await withUnsafeThrowingContinuation { continuation in
                let write = QueuedWrite(body: body, cancellation: cancellation, continuation: continuation)
                switch mailbox.post(write) {
                case .refused: write.finish(StoreError.closed)
                case .wakeWriter: wake()
                case .queued: break
                }
            }
        } onCancel: {
            cancellation.cancel()
        }
    }

    /// Writes queued and not yet taken into a transaction (for tests).
    nonisolated var queuedWrites: Int { mailbox.count }

    /// Closes the connection once the writes requested before have run; later writes throw
    /// `StoreError.closed`. Writes are refused from the call on, before it waits for the actor,
    /// so a drain under way ends once it has run those already queued.
    nonisolated func close() async {
        mailbox.close()
        await closeConnection()
    }

    private func closeConnection() {
        drain()
        // Closed here, not whenever the last reference goes: see `Database.close()`.
        database?.close()
        database = nil
    }

    /// Starts a drain on the actor. The task starts on this thread and its first step is the hop
    /// onto the actor's queue (where available): one wake-up, not one for the task and another
    /// for the hop.
    private nonisolated func wake() {
        if #available(macOS 26, iOS 26, *) {
            Task.immediate { await self.drain() }
        } else {
            Task { await self.drain() }
        }
    }

    // MARK: Group commit

    /// Runs batches until none is queued. (It does not yield the actor between batches: a
    /// yield costs a round trip through the scheduler per batch. An `exclusive` requested
    /// during a burst of writes therefore runs when the burst ends.)
    private func drain() {
        while runNextBatch() {}
    }

    /// Takes the oldest queued writes (up to `maximumBatchSize`), runs them in one transaction
    /// and answers each of their callers exactly once, after the transaction's fate is known;
    /// false if nothing was queued (the mailbox then marks the writer idle, so that the next
    /// write wakes it again).
    private func runNextBatch() -> Bool {
        var batch = takeBatch()
        if batch.isEmpty { return false }
        if batch.contains(where: { $0.cancellation.isCancelled }) {
            // Writes whose callers were cancelled before they started are not run. One pass, so
            // that a write cancelled meanwhile is either answered here or run, never both.
            var started: [any PendingWrite] = []
            for write in batch {
                if write.cancellation.isCancelled { write.finish(CancellationError()) } else { started.append(write) }
            }
            if started.isEmpty { return true }
            batch = started
        }
        let outcomes: [(any Error)?]
        if let database {
            outcomes = run(batch, on: database)
        } else {
            outcomes = Array(repeating: StoreError.closed, count: batch.count)
        }
        for (write, outcome) in zip(batch, outcomes) { write.finish(outcome) }
        return true
    }

    /// The next batch. With `gathersBatches` (durability `.full`, where a commit costs a sync),
    /// first waits a moment for as many writes as the last batch held: its callers, answered
    /// just now, post their next writes within microseconds. Without the wait, 8 writers split
    /// into uneven batches (those that queued during a commit, then those it answered): 4.4 to
    /// 7 writes per sync instead of 8 in the benchmark's `concurrent-writes-full`. The wait
    /// ends once that many are queued, or after half the last commit's time and never more
    /// than 5 ms (the commit of a large sync can take far longer than a sync of the WAL); a
    /// writer that does not come back costs at most that, once: the next batch is smaller, and
    /// so is the next goal. It waits even while nothing is queued yet: the callers just
    /// answered are usually still being scheduled, and a writer that went idle instead would be
    /// woken again by a new task per burst of writes (measured: 100 to 240 idle-and-wake cycles
    /// per 500 batches, and about 30% more time per write outside the sync, than 2 to 5 while
    /// waiting). If nothing came by the deadline the writer goes idle and forgets the goal, so a
    /// lone write after a burst is not held. No wait if the last batch held one. It comes
    /// before BEGIN, so each caller is still answered right after the commit that holds its
    /// write.
    private func takeBatch() -> [any PendingWrite] {
        if gathersBatches, lastBatchSize > 1 {
            mailbox.waitUntilQueued(min(lastBatchSize, maximumBatchSize), atMost: min(lastCommitDuration / 2, .milliseconds(5)))
        }
        let batch = mailbox.take(maximumBatchSize)
        lastBatchSize = batch.count
        return batch
    }

    /// Runs `batch` in one transaction and returns, once the transaction's fate is known, each
    /// write's outcome: nil if it committed, else the error to answer it with.
    private func run(_ batch: [any PendingWrite], on database: Database) -> [(any Error)?] {
        do {
            try database.execute(literal: "BEGIN IMMEDIATE TRANSACTION")
        } catch let error as SQLiteError where error.code == SQLiteError.busy {
            // The busy handler waited the whole timeout: another process kept the write lock.
            let timeout = StoreError.writeLockTimeout(path: database.path, waited: busyTimeout)
            return Array(repeating: timeout, count: batch.count)
        } catch {
            return Array(repeating: error, count: batch.count)
        }
        // The hooks collect the batch's changes (see ChangeCollector); anything collected
        // outside a write (an `exclusive` body in autocommit mode) is not a write's and is dropped.
        let changes = database.changeCollector!
        changes.discardAll()
        do {
            try changes.resolveColumnsIfNeeded(database)
        } catch {
            database.rollbackIfNeeded()
            return Array(repeating: error, count: batch.count)
        }
        var outcomes: [(any Error)?] = []
        outcomes.reserveCapacity(batch.count)
        for write in batch {
            let mark = changes.beginWrite()
            let error: (any Error)?
            database.cancellation = write.cancellation
            if batch.count == 1 {
                error = write.run(database)
            } else {
                error = Self.inSavepoint(database) { write.run(database) }
            }
            database.cancellation = nil
            if error != nil { changes.truncate(to: mark) }
            outcomes.append(error)
            // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) make SQLite roll back the whole
            // transaction: every write of the batch so far is then lost, and the rest cannot run.
            if let error, !database.isInTransaction {
                changes.discardAll()
                return Array(repeating: error, count: batch.count)
            }
        }
        if batch.count == 1, outcomes[0] != nil {
            database.rollbackIfNeeded()
            changes.discardAll()
            return outcomes
        }
        do {
            // The change log is written in the same transaction: observers in this process and
            // in others learn of exactly the committed changes, never of a rolled-back write.
            if !changes.pending.isEmpty, try logsChanges(database) {
                willCommit(try ChangeLogTable(db: database).append(changes.pending, committedAt: now()))
            }
            let commitStart = gathersBatches ? ContinuousClock.now : nil
            try database.execute(literal: "COMMIT TRANSACTION")
            if let commitStart { lastCommitDuration = ContinuousClock.now - commitStart }
        } catch {
            database.rollbackIfNeeded()
            changes.discardAll()
            return outcomes.map { $0 ?? error }
        }
        let committed = changes.takeCommitted()
        if !committed.isEmpty { onCommit(committed) }
        return outcomes
    }

    private func logsChanges(_ database: Database) throws -> Bool {
        if !hasChangeLog {
            hasChangeLog =
                try database.fetchOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'change_log'") != nil
        }
        return hasChangeLog
    }

    private static func inSavepoint(_ database: Database, _ body: () -> (any Error)?) -> (any Error)? {
        do {
            try database.execute(literal: "SAVEPOINT batched_write")
        } catch {
            return error
        }
        if let error = body() {
            if database.isInTransaction {
                try? database.execute(literal: "ROLLBACK TRANSACTION TO SAVEPOINT batched_write")
                try? database.execute(literal: "RELEASE SAVEPOINT batched_write")
            }
            return error
        }
        do {
            try database.execute(literal: "RELEASE SAVEPOINT batched_write")
            return nil
        } catch {
            return error
        }
    }
}

/// A queued write, as the writer sees it.
private protocol PendingWrite: AnyObject {
    /// Set when the caller's task is cancelled.
    var cancellation: CancellationFlag { get }
    /// Performs the write inside the open transaction; its error, if it threw.
    func run(_ database: Database) -> (any Error)?
    /// Answers the caller: with the write's result if `error` is nil, else with `error`. Called
    /// exactly once per write, after its transaction's fate is known (see `runNextBatch`).
    func finish(_ error: (any Error)?)
}

/// A write with its result type: body, result and the caller's continuation in one allocation.
///
/// Created by its caller and handed, through the mailbox's lock, to the writer, which alone uses
/// it from then on, on the actor: `run` at most once, then `finish` exactly once. (A write
/// requested once the writer is closed is never handed over: its caller finishes it at once.)
private final class QueuedWrite<T: Sendable>: PendingWrite {
    private let body: @Sendable (Database) throws -> T
    let cancellation: CancellationFlag
    private let continuation: UnsafeContinuation<T, any Error>
    private var result: T?

    init(
        body: @escaping @Sendable (Database) throws -> T, cancellation: CancellationFlag,
        continuation: UnsafeContinuation<T, any Error>
    ) {
        self.body = body
        self.cancellation = cancellation
        self.continuation = continuation
    }

    func run(_ database: Database) -> (any Error)? {
        do {
            result = try body(database)
            return nil
        } catch {
            return error
        }
    }

    func finish(_ error: (any Error)?) {
        if let error {
            continuation.resume(throwing: error)
        } else {
            // `finish(nil)` follows only a `run` that returned a result.
            continuation.resume(returning: result!)
        }
    }
}

/// Writes posted and not yet taken by the writer, shared by callers (which post) and the
/// writer (which takes); also whether the writer is draining, and whether it is closed.
private final class WriteMailbox: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every stored property is read and written only while
    // `lock` is held, in the methods below (`waitUntilQueued` holds it except while waiting on
    // it, which releases it). The writes it holds are not Sendable, but each changes hands once:
    // `post` takes it from its caller, `take` removes it as it gives it to the writer, so no
    // write is ever reachable from two threads at a time.
    private let lock = NSCondition()
    private var pending: [any PendingWrite] = []
    /// While the writer waits in `waitUntilQueued`, how many queued writes end its wait (then
    /// `post` signals once, at that count: one wake-up of the writer, not one per write).
    private var writerWaitsFor: Int?
    /// Whether a drain is under way (or about to start); while it is, new writes just queue up.
    private var draining = false
    private var closed = false

    enum Posted { case queued, wakeWriter, refused }

    /// Queues `write`; `.wakeWriter` if the writer was idle and must be woken by the caller,
    /// `.refused` once closed (the write is then not queued).
    func post(_ write: any PendingWrite) -> Posted {
        lock.withLock {
            if closed { return .refused }
            pending.append(write)
            if let goal = writerWaitsFor, pending.count >= goal { lock.signal() }
            if draining { return .queued }
            draining = true
            return .wakeWriter
        }
    }

    /// Takes up to `limit` of the oldest writes; none means the writer goes idle.
    func take(_ limit: Int) -> [any PendingWrite] {
        lock.withLock {
            if pending.count <= limit {
                defer { pending.removeAll(keepingCapacity: true) }
                if pending.isEmpty { draining = false }
                return pending
            }
            defer { pending.removeFirst(limit) }
            return Array(pending.prefix(limit))
        }
    }

    var count: Int { lock.withLock { pending.count } }

    /// Waits (blocking the writer's own queue, never the cooperative pool) until `count` writes
    /// are queued, the mailbox is closed or `limit` has passed, whether or not any is queued yet.
    func waitUntilQueued(_ count: Int, atMost limit: Duration) {
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        guard seconds > 0 else { return }
        let deadline = Date(timeIntervalSinceNow: seconds)
        lock.withLock {
            writerWaitsFor = count
            defer { writerWaitsFor = nil }
            while pending.count < count, !closed {
                if !lock.wait(until: deadline) { break }
            }
        }
    }

    /// Refuses every later write; those already queued stay to be taken.
    func close() {
        lock.withLock {
            closed = true
            lock.broadcast()
        }
    }
}
