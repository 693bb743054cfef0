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
///   write rolls back only itself (a batch size of 1 turns group commit off). A *rerunnable*
///   write (the store's own record methods: a body that touches nothing but the database) runs
///   without a savepoint while every write before it in the transaction is rerunnable too; if
///   one of those fails, the transaction is rolled back and the batch runs again from its
///   first write, each in its savepoint, so the outcome is the same as with savepoints
///   throughout;
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
/// so batches grow with the load. Under durability `.full` a batch also gathers: see
/// `runNextBatch`.
actor DatabaseWriter {
    private let executor = SerialQueueExecutor(label: "store.writer")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var database: Database?
    /// Whether the change_log table exists with its size column (migrations 0006 and 0015);
    /// cached once true.
    private var hasSizedChangeLog = false
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
    /// Whether a batch gathers the writers the last one answered (see `runNextBatch`).
    private let gathersBatches: Bool
    /// How many writes the next batch waits for (when gathering).
    private var gathering = BatchGathering()
    /// How long the last COMMIT took (when gathering).
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
    ///
    /// `rerunnable`: `body` has no effect outside the database and may run more than once (only
    /// its last run counts); such writes skip their savepoint where they can (see the type).
    nonisolated func write<T: Sendable>(
        rerunnable: Bool = false, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try Task.checkCancellation()
        let cancellation = CancellationFlag()
        return try await withTaskCancellationHandler {
            // Unsafe rather than checked: one allocation less per write, and the writer answers
            // every posted write exactly once (see `runNextBatch`).
            try await withUnsafeThrowingContinuation { continuation in
                let write = QueuedWrite(
                    body: body, rerunnable: rerunnable, cancellation: cancellation, continuation: continuation)
                switch mailbox.post(write) {
                case .refused: write.finish(StoreError.closed)
                case .cancelled: write.finish(CancellationError())
                case .wakeWriter: wake()
                case .queued: break
                }
            }
        } onCancel: {
            cancellation.cancel()
            // Still queued: answered at once, never run (it used to wait for the batch ahead of it:
            // behind a long sync, for all of it). Taken already: the writer answers it.
            mailbox.withdraw(cancellation)?.finish(CancellationError())
        }
    }

    /// Writes queued and not yet taken into a transaction (for tests).
    nonisolated var queuedWrites: Int { mailbox.count }

    /// How many writes the next batch gathers, 0 for none.
    var gatheringGoal: Int { gathersBatches ? gathering.goal(upTo: maximumBatchSize) : 0 }

    /// Closes the connection once the writes requested before have run; later writes throw
    /// `StoreError.closed`. Writes are refused from the call on, before it waits for the actor,
    /// so a drain under way ends once it has run those already queued.
    ///
    /// If the database file was renamed away (`mv store store.old`) or replaced while its
    /// `-wal` and `-shm` are still the ones opened, it first runs a passive checkpoint (`PRAGMA
    /// wal_checkpoint(PASSIVE)`, as storectl does before it closes): no connection checkpoints
    /// as it closes then (SQLite's "moved" database; `Database.close()`), and the store's close
    /// then removes the `-wal` (`WALFiles.removeOrphanedWALFiles`), so the changes committed
    /// since the last checkpoint were in neither file. The checkpoint writes them into the file
    /// the connection has open, through its own descriptor, wherever that file now is; if it
    /// fails, things are as they were.
    nonisolated func close() async {
        mailbox.close()
        await closeConnection()
    }

    private func closeConnection() {
        drain()
        if let database, let files = database.walFiles, files.databaseReplaced, files.walAndShmAreStillOurs {
            _ = try? database.query("PRAGMA wal_checkpoint(PASSIVE)") { _ in () }
        }
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
    ///
    /// With `gathersBatches` (durability `.full`, where a commit costs a sync) a batch also
    /// gathers: it aims for as many writes as the last batch answered plus those that were
    /// already queued behind it (`BatchGathering`), since callers answered just now post their
    /// next writes within microseconds. Without that, 8 writers split into uneven batches (those
    /// that queued during a commit, then those it answered): 4.4 to 7 writes per sync instead of
    /// 8 in the benchmark's `concurrent-writes-full`. The batch starts with the first write to
    /// come, and runs each later one as it comes, while the others are still on their way: the
    /// transaction's work overlaps the callers' scheduling instead of following it. It commits
    /// once the goal is reached, or after half the last commit's time and never more than 5 ms
    /// (a large sync's commit can take far longer than a sync of the WAL); a writer that does
    /// not come back costs at most that, once: the next batch is smaller, and so is the next
    /// goal. If nothing came by the deadline the writer goes idle and forgets the goal, so a
    /// lone write after a burst is not held. No gathering when one write is expected. Each
    /// caller is still answered right after the commit that holds its write.
    private func runNextBatch() -> Bool {
        let goal = gatheringGoal
        let deadline = goal > 0 ? ContinuousClock.now + min(lastCommitDuration / 2, .milliseconds(5)) : nil
        var batch = WriteBatch(gathering: goal > 0)
        // Gathering, the transaction begins while the first write is still on its way, so that
        // BEGIN is off the path from one commit to the next; if none comes, it ends unused.
        var begun: (any Error)?? = nil
        if let deadline {
            if let database { begun = beginUnlessLocked(database) }
            mailbox.waitUntilQueued(until: deadline)
        }
        let anyQueued = take(into: &batch, goingIdleIfNone: true)
        guard let database else {
            for write in batch.writes { write.finish(StoreError.closed) }
            return anyQueued
        }
        if batch.writes.isEmpty { // none queued, or every write taken had been cancelled
            if case .some(nil) = begun { database.rollbackIfNeeded() }
            if !anyQueued { gathering.wentIdle() }
            return anyQueued
        }
        if let failure = begun ?? beginStoppingIfCancelled(database, for: batch.writes) {
            for write in batch.writes { write.finish(failure) }
            return true
        }
        run(&batch, from: 0, on: database)
        while let deadline, !batch.isOver, batch.writes.count < goal {
            mailbox.waitUntilQueued(until: deadline)
            let count = batch.writes.count
            if !take(into: &batch, goingIdleIfNone: false) { break }
            run(&batch, from: count, on: database)
        }
        if !batch.isOver { commit(&batch, on: database) }
        if gathersBatches { gathering.batchEnded(answering: batch.writes.count, queued: mailbox.count) }
        for (write, outcome) in zip(batch.writes, batch.outcomes) { write.finish(outcome) }
        return true
    }

    /// Moves up to the batch's room of queued writes into it; writes whose callers were
    /// cancelled before they started are answered and dropped here (one pass, so that a write
    /// cancelled meanwhile is either answered here or run, never both). False if none was queued.
    private func take(into batch: inout WriteBatch, goingIdleIfNone: Bool) -> Bool {
        let taken = mailbox.take(maximumBatchSize - batch.writes.count, goingIdleIfNone: goingIdleIfNone)
        if taken.isEmpty { return false }
        for write in taken {
            if write.cancellation.isCancelled { write.finish(CancellationError()) } else { batch.writes.append(write) }
        }
        return true
    }

    /// `begin`, for a batch already taken: while BEGIN waits for another process's write lock,
    /// it stops once every write waiting on it was cancelled (Ctrl-C), not at the end of the
    /// busy timeout. (A gathering batch's early BEGIN does not wait at all: `beginUnlessLocked`.)
    private func beginStoppingIfCancelled(_ database: Database, for writes: [any PendingWrite]) -> (any Error)? {
        database.stopsWaitingForLock = { writes.allSatisfy(\.cancellation.isCancelled) }
        defer { database.stopsWaitingForLock = nil }
        return begin(database)
    }

    /// A gathering batch's early BEGIN, which never waits for the write lock: nil (not begun) if
    /// another connection holds it, and the batch begins once it has writes
    /// (`beginStoppingIfCancelled`), where a cancelled write stops the wait. Waiting here, with no
    /// write yet to ask, ignored cancellation and held `close()` for up to the busy timeout.
    private func beginUnlessLocked(_ database: Database) -> (any Error)?? {
        database.stopsWaitingForLock = { true }
        defer { database.stopsWaitingForLock = nil }
        let failure = begin(database)
        return failure is CancellationError ? nil : .some(failure)
    }

    /// For tests: as if a batch of `writes` had just been answered, so that the next drain
    /// gathers (and begins its transaction before a write comes).
    func expectWritesForTesting(_ writes: Int) {
        gathering.batchEnded(answering: writes, queued: 0)
    }

    /// BEGIN IMMEDIATE, and the change collector made ready; the error to answer the batch with
    /// if either fails (`CancellationError` when `stopsWaitingForLock` ended a wait for the lock).
    private func begin(_ database: Database) -> (any Error)? {
        do {
            try database.execute(literal: "BEGIN IMMEDIATE TRANSACTION")
        } catch let error as SQLiteError where error.code == SQLiteError.busy {
            // The busy handler stopped for the writes' cancellation, or waited the whole timeout:
            // another process kept the write lock.
            if database.stopsWaitingForLock?() == true { return CancellationError() }
            return StoreError.writeLockTimeout(path: database.path, waited: busyTimeout)
        } catch {
            return error
        }
        // The store's -wal or -shm deleted and made anew by another process: this connection's
        // WAL index is stale, and a commit through it would write over that process's confirmed
        // frames. Every write fails from then on (looked at every 100 ms at most: see WALFiles).
        if let replaced = database.walFiles?.replacedFileForWrite() {
            database.rollbackIfNeeded()
            return StoreError.storeMoved(path: replaced)
        }
        // The hooks collect the batch's changes (see ChangeCollector); anything collected
        // outside a write (an `exclusive` body in autocommit mode) is not a write's and is dropped.
        let changes = database.changeCollector!
        changes.discardAll()
        do {
            try changes.resolveColumnsIfNeeded(database)
        } catch {
            database.rollbackIfNeeded()
            return error
        }
        return nil
    }

    /// Runs the batch's writes from `start` on, in the open transaction, noting each outcome.
    private func run(_ batch: inout WriteBatch, from start: Int, on database: Database) {
        let changes = database.changeCollector!
        var index = start
        while index < batch.writes.count {
            let write = batch.writes[index]
            // Alone: the only write of a batch that will not grow; its failure rolls back the
            // transaction, so it needs no savepoint either.
            let alone = !batch.gathering && batch.writes.count == 1
            let withoutSavepoint = alone || (batch.allRerunnable && write.rerunnable)
            if !write.rerunnable { batch.allRerunnable = false }
            let mark = changes.beginWrite()
            database.cancellation = write.cancellation
            let error =
                withoutSavepoint
                ? Self.runCallers(write, on: database) : Self.inSavepoint(database) { Self.runCallers(write, on: database) }
            database.cancellation = nil
            guard let error else {
                batch.outcomes.append(nil)
                index += 1
                continue
            }
            changes.truncate(to: mark)
            // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) make SQLite roll back the whole
            // transaction: every write of the batch so far is then lost, and the rest cannot run.
            if !database.isInTransaction {
                changes.discardAll()
                batch.fail(with: error, causedBy: index)
                return
            }
            if !withoutSavepoint {
                batch.outcomes.append(error)
                index += 1
                continue
            }
            // A write without a savepoint failed, its changes (if any) mixed with the batch's:
            // roll the transaction back and run the batch again from its first write, each in
            // its savepoint now. Every write run so far was rerunnable, the failing one too: it
            // runs again and is answered by that run (which usually fails the same way).
            database.rollbackIfNeeded()
            changes.discardAll()
            if alone {
                batch.outcomes.append(error)
                batch.isOver = true
                return
            }
            if let failure = begin(database) {
                batch.fail(with: failure)
                return
            }
            batch.allRerunnable = false
            batch.outcomes.removeAll(keepingCapacity: true)
            index = 0
        }
    }

    /// Writes the change log and commits; a failure answers every write that had succeeded
    /// with it. A transaction in which every write failed is rolled back instead.
    private func commit(_ batch: inout WriteBatch, on database: Database) {
        let changes = database.changeCollector!
        if !batch.outcomes.contains(where: { $0 == nil }) {
            database.rollbackIfNeeded()
            changes.discardAll()
            return
        }
        do {
            // The change log is written in the same transaction: observers in this process and
            // in others learn of exactly the committed changes, never of a rolled-back write.
            if !changes.pending.isEmpty, case (let logs, let sized) = try changeLog(database), logs {
                willCommit(try ChangeLogTable(db: database).append(changes.pending, committedAt: now(), sized: sized))
            }
            let commitStart = gathersBatches ? ContinuousClock.now : nil
            try database.execute(literal: "COMMIT TRANSACTION")
            if let commitStart { lastCommitDuration = ContinuousClock.now - commitStart }
        } catch {
            database.rollbackIfNeeded()
            changes.discardAll()
            batch.outcomes = batch.outcomes.map { $0 ?? error }
            return
        }
        let committed = changes.takeCommitted()
        if !committed.isEmpty { onCommit(committed) }
    }

    /// Whether the store has its change log (migration 0006), and whether the log records each
    /// row's size (0015): looked up until both are true, then cached.
    private func changeLog(_ database: Database) throws -> (exists: Bool, sized: Bool) {
        if hasSizedChangeLog { return (true, true) }
        guard try database.fetchOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'change_log'") != nil
        else { return (false, false) }
        hasSizedChangeLog = try database.fetchOne("SELECT 1 FROM pragma_table_info('change_log') WHERE name = 'size'") != nil
        return (true, hasSizedChangeLog)
    }

    /// Runs a write's closure, marked as the caller's: it may not begin, commit or roll back the
    /// batch's transaction (see `Database.runsCallerClosure`).
    private static func runCallers(_ write: any PendingWrite, on database: Database) -> (any Error)? {
        database.runsCallerClosure = true
        database.runsInWriteTransaction = true
        defer {
            database.runsCallerClosure = false
            database.runsInWriteTransaction = false
        }
        // A closure that swallowed the error of the statement that ended the transaction
        // returns as if it succeeded: it fails, and (the transaction gone) so does the batch.
        return write.run(database) ?? (database.isInTransaction ? nil : Statement.transactionEnded(sql: nil))
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

/// The writes of one transaction and what became of each, as the writer runs them.
private struct WriteBatch {
    /// Whether more writes may join while it runs (see `DatabaseWriter.runNextBatch`).
    let gathering: Bool
    var writes: [any PendingWrite] = []
    /// One per write run so far: nil if it succeeded (the commit has the last word), else its error.
    var outcomes: [(any Error)?] = []
    /// Whether every write run so far in the open transaction is rerunnable: then a failing one
    /// can be undone by rolling back and running them again, and they need no savepoints.
    var allRerunnable = true
    /// Set once the transaction has ended without a commit: every write's outcome is known.
    var isOver = false

    /// Every write of the batch, run or not, fails with `error`: the transaction is gone.
    mutating func fail(with error: any Error) {
        outcomes = Array(repeating: error, count: writes.count)
        isOver = true
    }

    /// The write at `culprit` failed with `error`, which ended the transaction: it fails with
    /// that error, and every other write with one that says so (not the culprit's own, a
    /// UNIQUE constraint say, which it did not cause).
    mutating func fail(with error: any Error, causedBy culprit: Int) {
        let shared = SQLiteError(
            extendedCode: SQLiteError.abortRollback,
            message:
                "the transaction this write shared with others was rolled back by another write's error (\(error)); nothing of this write was kept"
        )
        outcomes = writes.indices.map { $0 == culprit ? error : shared }
        isOver = true
    }
}

/// A queued write, as the writer sees it.
private protocol PendingWrite: AnyObject {
    /// Set when the caller's task is cancelled.
    var cancellation: CancellationFlag { get }
    /// Whether `run` may run more than once (its body touches nothing but the database).
    var rerunnable: Bool { get }
    /// Performs the write inside the open transaction; its error, if it threw.
    func run(_ database: Database) -> (any Error)?
    /// Answers the caller: with the write's result if `error` is nil, else with `error`. Called
    /// exactly once per write, after its transaction's fate is known (see `runNextBatch`).
    func finish(_ error: (any Error)?)
}

/// A write with its result type: body, result and the caller's continuation in one allocation.
///
/// Created by its caller and handed, through the mailbox's lock, to the writer, which alone uses
/// it from then on, on the actor: `run` at most once (or again, if `rerunnable`, after its
/// transaction was rolled back), then `finish` exactly once. (A write requested once the writer
/// is closed is never handed over: its caller finishes it at once.)
private final class QueuedWrite<T: Sendable>: PendingWrite {
    private let body: @Sendable (Database) throws -> T
    let rerunnable: Bool
    let cancellation: CancellationFlag
    private let continuation: UnsafeContinuation<T, any Error>
    private var result: T?

    init(
        body: @escaping @Sendable (Database) throws -> T, rerunnable: Bool, cancellation: CancellationFlag,
        continuation: UnsafeContinuation<T, any Error>
    ) {
        self.body = body
        self.rerunnable = rerunnable
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
    /// Whether the writer is blocked in `waitUntilQueued` (then `post` signals it).
    private var writerWaits = false
    /// Whether a drain is under way (or about to start); while it is, new writes just queue up.
    private var draining = false
    private var closed = false

    /// How long `waitUntilQueued` polls before it blocks.
    static let spinLimit: Duration = .microseconds(100)

    enum Posted { case queued, wakeWriter, refused, cancelled }

    /// Queues `write`; `.wakeWriter` if the writer was idle and must be woken by the caller,
    /// `.refused` once closed, `.cancelled` if its caller was cancelled already (then it is not
    /// queued: `withdraw`, called after the flag is set and under this lock, found nothing).
    func post(_ write: any PendingWrite) -> Posted {
        lock.withLock {
            if closed { return .refused }
            if write.cancellation.isCancelled { return .cancelled }
            pending.append(write)
            if writerWaits { lock.signal() }
            if draining { return .queued }
            draining = true
            return .wakeWriter
        }
    }

    /// Takes up to `limit` of the oldest writes. None, with `goingIdleIfNone`, means the writer
    /// goes idle (the next `post` asks its caller to wake it).
    func take(_ limit: Int, goingIdleIfNone: Bool) -> [any PendingWrite] {
        lock.withLock {
            if pending.count <= limit {
                defer { pending.removeAll(keepingCapacity: true) }
                if pending.isEmpty, goingIdleIfNone { draining = false }
                return pending
            }
            defer { pending.removeFirst(limit) }
            return Array(pending.prefix(limit))
        }
    }

    var count: Int { lock.withLock { pending.count } }

    /// Removes the queued write with this cancellation, if the writer has not taken it: it is
    /// then the caller's, to answer.
    func withdraw(_ cancellation: CancellationFlag) -> (any PendingWrite)? {
        lock.withLock {
            guard let index = pending.firstIndex(where: { $0.cancellation === cancellation }) else { return nil }
            return pending.remove(at: index)
        }
    }

    /// Returns once a write is queued, the mailbox is closed or `deadline` has passed. Runs on
    /// the writer's own queue, never on the cooperative pool.
    ///
    /// It polls first, yielding the processor between looks, for at most `spinLimit`, and only
    /// then blocks. The writes it waits for are usually those of callers answered a moment ago,
    /// still being scheduled: a writer that blocked would be woken by each, and on this
    /// project's 2-core machine a wake-up of a blocked thread cost tens of microseconds, more
    /// than the whole wait (measured in `Benchmarks/Profiles/concurrent-writes.md`). Polling
    /// with `sched_yield` leaves the processor to any other thread that is ready to run (the
    /// callers among them), and only a writer gathering a batch under `.full` waits at all.
    func waitUntilQueued(until deadline: ContinuousClock.Instant) {
        let spinEnd = min(deadline, ContinuousClock.now + Self.spinLimit)
        while ContinuousClock.now < spinEnd {
            if lock.withLock({ !pending.isEmpty || closed }) { return }
            sched_yield()
        }
        lock.withLock {
            writerWaits = true
            defer { writerWaits = false }
            while pending.isEmpty, !closed {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero { break }
                let seconds = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18
                if !lock.wait(until: Date(timeIntervalSinceNow: seconds)) { break }
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
