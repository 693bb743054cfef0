import Foundation

/// Read-only connections to one database file, used concurrently.
///
/// Guarantees: every read runs in its own transaction, so it sees one committed snapshot from
/// start to end; in WAL mode "readers do not block writers and a writer does not block readers"
/// (https://sqlite.org/wal.html), so a read never waits for a write in progress. At most
/// `maximumCount` connections are open; a read beyond that waits, without holding any thread,
/// for one to be free. Each connection runs its reads on its own serial dispatch queue: never on
/// Swift's cooperative pool, and never blocking a thread to wait.
final class ReaderPool: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `idle`, `waiting`, `openCount` and `isClosed` are read and
    // written only while `lock` is held. A `Reader` (connection and queue) is owned by exactly
    // one read at a time: taken out of `idle` (or created) under the lock, used only on its own
    // serial queue, and handed back under the lock. Everything else is immutable.
    private let lock = NSLock()
    private var idle: [Reader] = []
    private var waiting: [Waiter] = []
    private var openCount = 0
    private var isClosed = false
    /// Callers of `close()` waiting for the connections still in use to be closed.
    private var closeWaiters: [CheckedContinuation<Void, Never>] = []
    private let path: String
    private let options: Database.OpenOptions
    let maximumCount: Int

    /// A connection and the serial queue it is used on.
    private struct Reader: @unchecked Sendable {
        // Why @unchecked Sendable is safe: `database` (not Sendable) is only ever touched on
        // `queue`, a serial queue, by the one read that owns this Reader at the time (see above).
        let database: Database
        let queue: DispatchQueue
    }

    /// A read waiting for a connection: `run` is given one, `fail` is told why there is none.
    private struct Waiter: Sendable {
        let run: @Sendable (Reader) -> Void
        let fail: @Sendable (any Error) -> Void
        /// The read's cancellation: a cancelled waiter leaves the queue at once (`abandon`).
        let cancellation: CancellationFlag?
    }

    /// The store's files as it opened them: each connection closes without a checkpoint if one
    /// was replaced, and no connection opens once the database was (see `WALFiles`).
    private let walFiles: WALFiles?

    init(path: String, maximumCount: Int, busyTimeout: Duration, vfsName: String? = nil, walFiles: WALFiles? = nil) {
        self.path = path
        self.walFiles = walFiles
        self.maximumCount = max(1, maximumCount)
        self.options = Database.OpenOptions(readOnly: false, create: false, busyTimeout: busyTimeout, vfsName: vfsName)
    }

    /// The number of connections open now (for tests that check nothing leaks).
    var openConnections: Int { lock.withLock { openCount } }

    /// The reads waiting for a connection now (for tests).
    var waitingReads: Int { lock.withLock { waiting.count } }

    /// Runs `body` in a read transaction. A read whose task is cancelled before it starts is not
    /// run (`CancellationError`); a running one sees it through `Database.checkCancellation()`.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try Task.checkCancellation()
        let cancellation = CancellationFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                read(body, cancellation: cancellation) { continuation.resume(with: $0) }
            }
        } onCancel: {
            cancellation.cancel()
            abandon(cancellation)
        }
    }

    /// A read cancelled while it waits for a connection is answered at once (it used to wait
    /// until a connection was free: behind a long read, for all of it). One that already has a
    /// connection sees the cancellation where it checks for it.
    private func abandon(_ cancellation: CancellationFlag) {
        let waiter = lock.withLock { () -> Waiter? in
            guard let index = waiting.firstIndex(where: { $0.cancellation === cancellation }) else { return nil }
            return waiting.remove(at: index)
        }
        waiter?.fail(CancellationError())
    }

    /// Runs `produce` in a read transaction as `read` does, and hands each element it yields
    /// to the returned stream at once, so that the caller works on one while the reader makes
    /// the next (`Store`'s `fetchAll`: the reader copies rows, the caller decodes them).
    ///
    /// Protocol: emits the elements in the order yielded; finishes after the last, or throws
    /// what `produce` throws (`StoreError.closed` once the pool is closed). When the consuming
    /// task is cancelled or the stream is dropped, the next `yield` returns false and
    /// `produce` should return.
    /// Never waits for the consumer, as no read blocks its thread: elements not consumed yet are
    /// buffered, at most what the caller would hold once it has consumed them all.
    func stream<Element: Sendable>(
        _ produce: @escaping @Sendable (Database, _ yield: (Element) -> Bool) throws -> Void
    ) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self)
        let cancellation = CancellationFlag()
        continuation.onTermination = { [weak self] _ in
            cancellation.cancel()
            self?.abandon(cancellation)
        }
        read(
            { database in
                try produce(database) { element in
                    if cancellation.isCancelled { return false }
                    continuation.yield(element)
                    return true
                }
            }, cancellation: cancellation
        ) { result in
            if case .failure(let error) = result { continuation.finish(throwing: error) } else { continuation.finish() }
        }
        return stream
    }

    /// `read`, answered through `completion` on the reader's queue: for callers that must not
    /// depend on Swift's cooperative pool (the change monitor's polling). A set `cancellation`
    /// keeps a read that has not started from running, and is seen by a running one.
    func read<T: Sendable>(
        _ body: @escaping @Sendable (Database) throws -> T, cancellation: CancellationFlag? = nil,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        acquire(
            Waiter(
                run: { reader in
                    let result: Result<T, any Error>
                    if let cancellation, cancellation.isCancelled {
                        result = .failure(CancellationError())
                    } else {
                        reader.database.cancellation = cancellation
                        result = Result {
                            try reader.database.inTransaction(.deferred) {
                                reader.database.runsCallerClosure = true
                                defer { reader.database.runsCallerClosure = false }
                                return try body(reader.database)
                            }
                        }
                        reader.database.cancellation = nil
                    }
                    self.release(reader)
                    completion(result)
                },
                fail: { completion(.failure($0)) },
                cancellation: cancellation
            ))
    }

    /// Closes every connection, and returns once all are closed: idle ones at once, those of
    /// reads still running when each read ends. Later reads, and reads still waiting for a
    /// connection, throw `StoreError.closed`.
    ///
    /// Waiting matters: the last connection to a WAL database to close checkpoints and deletes
    /// the `-wal` file by name, so a connection that closed after the store said it was closed
    /// could delete the WAL of a new database made at the same path (seen as SQLITE_IOERR_SHORT_READ
    /// in the benchmark, which reopens one path).
    func close() async {
        let (abandoned, closing) = lock.withLock { () -> ([Waiter], [Reader]) in
            isClosed = true
            let closing = idle
            idle.removeAll()
            defer { waiting.removeAll() }
            return (waiting, closing)
        }
        for waiter in abandoned { waiter.fail(StoreError.closed) }
        // An idle connection is owned by the pool, and now by this call alone: no read uses it.
        for reader in closing { reader.database.close() }
        await withCheckedContinuation { continuation in
            let done = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                openCount -= closing.count
                closeWaiters.append(continuation)
                guard openCount == 0 else { return [] }
                // Every caller of close() waiting: two at once, the other may have found a
                // connection still open before this one closed it (it waited forever).
                defer { closeWaiters.removeAll() }
                return closeWaiters
            }
            for waiter in done { waiter.resume() }
        }
    }

    /// One connection fewer (closed, or never opened); wakes `close()` when none is left.
    /// Called with `lock` held; returns the waiters to resume after it is released.
    private func connectionGone() -> [CheckedContinuation<Void, Never>] {
        openCount -= 1
        guard isClosed, openCount == 0 else { return [] }
        defer { closeWaiters.removeAll() }
        return closeWaiters
    }

    // MARK: Connections

    private enum Grant {
        case reuse(Reader)
        case open
        case wait
        case closed
        case cancelled
    }

    private func acquire(_ waiter: Waiter) {
        let grant = lock.withLock { () -> Grant in
            if isClosed { return .closed }
            if let reader = idle.popLast() { return .reuse(reader) }
            if openCount < maximumCount {
                openCount += 1
                return .open
            }
            // Cancelled before it could queue: `abandon` (which takes this lock after setting
            // the flag) found nothing to answer, so it is answered here, not after a wait.
            if waiter.cancellation?.isCancelled == true { return .cancelled }
            waiting.append(waiter)
            return .wait
        }
        switch grant {
        case .reuse(let reader): reader.queue.async { waiter.run(reader) }
        case .open: open(for: waiter)
        case .wait: break
        case .closed: waiter.fail(StoreError.closed)
        case .cancelled: waiter.fail(CancellationError())
        }
    }

    /// Opens a connection on a new serial queue (overcommit: it gets a thread of its own) and
    /// runs the waiter's read on it.
    private func open(for waiter: Waiter) {
        let queue = DispatchQueue(label: "store.reader", qos: .userInitiated)
        queue.async { [path, options, walFiles] in
            do {
                let database = try Database(path: path, options: options)
                database.walFiles = walFiles
                // The store's file replaced since it opened (a backup restored over it): this
                // connection opened the new file, and the old file's -wal and -shm still at the
                // path, and would read a mix of the two (and its close, the new file's last,
                // would checkpoint the old frames into it; `Database.close()` skips that now).
                // Looked at after the open, so a replacement before it is seen.
                if walFiles?.databaseReplaced == true {
                    database.close()
                    throw StoreError.storeMoved(path: path)
                }
                // Belt and braces: a read closure cannot write through this connection.
                try database.execute("PRAGMA query_only = ON")
                // And it stays on: a read closure that turned it off wrote, committed, and no
                // observer saw it.
                database.locksQueryOnly = true
                waiter.run(Reader(database: database, queue: queue))
            } catch {
                // The slot is free again: a read that queued behind this one gets its own try,
                // instead of waiting for a connection that will never be released.
                let (next, closed) = self.lock.withLock { () -> (Waiter?, [CheckedContinuation<Void, Never>]) in
                    if !self.isClosed, !self.waiting.isEmpty { return (self.waiting.removeFirst(), []) }
                    return (nil, self.connectionGone())
                }
                waiter.fail(error)
                for waiter in closed { waiter.resume() }
                if let next { self.open(for: next) }
            }
        }
    }

    /// Hands a connection to the next waiting read, or back to the idle ones.
    private func release(_ reader: Reader) {
        enum Next {
            case run(Waiter)
            case kept
            case close
        }
        let next = lock.withLock { () -> Next in
            if isClosed { return .close }
            if !waiting.isEmpty { return .run(waiting.removeFirst()) }
            idle.append(reader)
            return .kept
        }
        switch next {
        // Already on the reader's queue: the next read follows on it.
        case .run(let waiter): reader.queue.async { waiter.run(reader) }
        case .kept: break
        case .close:
            // After close(), the connection is closed here, on its own queue, before close() is
            // told it is gone.
            reader.database.close()
            let closed = lock.withLock { connectionGone() }
            for waiter in closed { waiter.resume() }
        }
    }
}
