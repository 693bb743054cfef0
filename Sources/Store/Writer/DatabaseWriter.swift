import Foundation

/// The one writer of a store: owns its only read-write connection and serializes every write.
///
/// Guarantees:
/// - every write runs in a transaction (`BEGIN IMMEDIATE`, so another process's writer is waited
///   for through the busy timeout, never surfaced as "database is locked" mid-transaction);
/// - a write that throws is rolled back and its error rethrown; nothing of it persists;
/// - a caller is answered only after its write has committed (or failed);
/// - writes that arrive while another is running are grouped into one transaction (group
///   commit), at most `maximumBatchSize` of them, each in its own savepoint, so one failing
///   write rolls back only itself (a batch size of 1 turns group commit off);
/// - blocking SQLite calls run on this actor's own dispatch queue, never on the cooperative pool.
actor DatabaseWriter {
    private let executor: SerialQueueExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private var database: Database?
    private var pending: [PendingWrite] = []
    private var flushScheduled = false
    /// Called with a transaction's `change_log` tx just before it is committed.
    private let willCommit: @Sendable (_ transaction: Int64) -> Void
    /// Called after each commit that changed records, with the changes.
    private let onCommit: @Sendable ([Change]) -> Void
    private let now: @Sendable () -> Date
    /// The most writes committed in one transaction; 1 gives every write its own transaction.
    private let maximumBatchSize: Int
    /// Whether the change_log table exists (it does once migration 0006 ran); cached once true.
    private var hasChangeLog = false

    /// A queued write: `run` performs it inside the open transaction and returns its error, if
    /// any; `finish` answers the caller once the transaction's fate is known.
    private struct PendingWrite {
        let run: (Database) -> (any Error)?
        let finish: ((any Error)?) -> Void
    }

    /// Opens the connection and runs `prepare` on it (pragmas, migrations) before any write.
    init(
        path: String, options: Database.OpenOptions,
        maximumBatchSize: Int = .max,
        now: @escaping @Sendable () -> Date,
        willCommit: @escaping @Sendable (_ transaction: Int64) -> Void,
        onCommit: @escaping @Sendable ([Change]) -> Void,
        prepare: (Database) throws -> Void
    ) throws {
        executor = SerialQueueExecutor(label: "store.writer")
        let database = try Database(path: path, options: options)
        try prepare(database)
        self.database = database
        self.now = now
        self.maximumBatchSize = max(1, maximumBatchSize)
        self.willCommit = willCommit
        self.onCommit = onCommit
    }

    /// Runs `body` on the writer connection outside any write batch (migrations, pragmas).
    func exclusive<T: Sendable>(_ body: (Database) throws -> T) throws -> T {
        guard let database else { throw StoreError.closed }
        return try body(database)
    }

    /// Runs `body` in a write transaction and returns its result once committed.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            var result: T?
            pending.append(PendingWrite(
                run: { database in
                    do {
                        result = try body(database)
                        return nil
                    } catch {
                        return error
                    }
                },
                finish: { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: result!) }
                }
            ))
            scheduleFlush()
        }
    }

    func close() {
        database = nil
    }

    // MARK: Group commit

    private func scheduleFlush() {
        guard !flushScheduled else { return }
        flushScheduled = true
        // Enqueued behind the write calls already waiting for this actor, so they join the batch.
        Task { self.flush() }
    }

    private func flush() {
        flushScheduled = false
        while !pending.isEmpty {
            let batch: [PendingWrite]
            if pending.count <= maximumBatchSize {
                batch = pending
                pending.removeAll(keepingCapacity: true)
            } else {
                batch = Array(pending.prefix(maximumBatchSize))
                pending.removeFirst(maximumBatchSize)
            }
            guard let database else {
                for write in batch { write.finish(StoreError.closed) }
                continue
            }
            run(batch, on: database)
        }
    }

    private func run(_ batch: [PendingWrite], on database: Database) {
        do {
            try database.execute(literal: "BEGIN IMMEDIATE TRANSACTION")
        } catch {
            for write in batch { write.finish(error) }
            return
        }
        var outcomes: [(any Error)?] = []
        outcomes.reserveCapacity(batch.count)
        for (index, write) in batch.enumerated() {
            let mark = database.recordedChanges.count
            let error: (any Error)?
            if batch.count == 1 {
                error = write.run(database)
            } else {
                error = Self.inSavepoint(database) { write.run(database) }
            }
            if error != nil { database.recordedChanges.removeSubrange(mark...) }
            outcomes.append(error)
            // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) make SQLite roll back the whole
            // transaction: every write of the batch so far is then lost, and the rest cannot run.
            if let error, !database.isInTransaction {
                database.recordedChanges.removeAll()
                for write in batch[..<index] { write.finish(error) }
                write.finish(error)
                for write in batch[(index + 1)...] { write.finish(error) }
                return
            }
        }
        if batch.count == 1, let error = outcomes[0] {
            database.rollbackIfNeeded()
            database.recordedChanges.removeAll()
            batch[0].finish(error)
            return
        }
        do {
            // The change log is written in the same transaction: observers in this process and
            // in others learn of exactly the committed changes, never of a rolled-back write.
            if !database.recordedChanges.isEmpty, try logsChanges(database) {
                willCommit(try ChangeLogTable(db: database).append(database.recordedChanges, committedAt: now()))
            }
            try database.execute(literal: "COMMIT TRANSACTION")
        } catch {
            database.rollbackIfNeeded()
            database.recordedChanges.removeAll()
            for (write, outcome) in zip(batch, outcomes) { write.finish(outcome ?? error) }
            return
        }
        let changes = database.recordedChanges
        database.recordedChanges.removeAll()
        if !changes.isEmpty { onCommit(changes) }
        for (write, outcome) in zip(batch, outcomes) { write.finish(outcome) }
    }

    private func logsChanges(_ database: Database) throws -> Bool {
        if !hasChangeLog {
            hasChangeLog = try database.fetchOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'change_log'") != nil
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
