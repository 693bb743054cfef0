import Foundation

/// Read-only connections to one database file, used concurrently.
///
/// Guarantees: every read runs in its own transaction, so it sees one committed snapshot from
/// start to end; in WAL mode "readers do not block writers and a writer does not block readers"
/// (https://sqlite.org/wal.html), so a read never waits for a write in progress. At most
/// `maximumCount` connections are open; a read beyond that waits for one to be free. Reads run
/// on a dispatch queue, not on Swift's cooperative pool.
final class ReaderPool: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `idle`, `openCount` and `isClosed` are read and written
    // only while `lock` is held, and a `Database` taken out of `idle` is used by exactly one
    // thread until it is put back; `limit` bounds how many are out at once. Everything else is
    // immutable.
    private let lock = NSLock()
    private var idle: [Database] = []
    private var openCount = 0
    private var isClosed = false
    private let limit: DispatchSemaphore
    private let queue = DispatchQueue(label: "store.readers", qos: .userInitiated, attributes: .concurrent)
    private let path: String
    private let options: Database.OpenOptions
    let maximumCount: Int

    init(path: String, maximumCount: Int, busyTimeout: Duration) {
        self.path = path
        self.maximumCount = maximumCount
        self.limit = DispatchSemaphore(value: maximumCount)
        self.options = Database.OpenOptions(readOnly: false, create: false, busyTimeout: busyTimeout)
    }

    /// The number of connections open now (for tests that check nothing leaks).
    var openConnections: Int { lock.withLock { openCount } }

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try self.readNow(body) })
            }
        }
    }

    /// Closes every idle connection; later reads throw `StoreError.closed`. Reads that are
    /// running keep theirs until they finish, and it is closed then.
    func close() {
        lock.withLock {
            isClosed = true
            openCount -= idle.count
            idle.removeAll()
        }
    }

    private func readNow<T>(_ body: (Database) throws -> T) throws -> T {
        limit.wait()
        defer { limit.signal() }
        let database = try checkOut()
        defer { checkIn(database) }
        return try database.inTransaction(.deferred) { try body(database) }
    }

    private func checkOut() throws -> Database {
        let (closed, reusable) = lock.withLock { isClosed ? (true, nil) : (false, idle.popLast()) }
        if closed { throw StoreError.closed }
        if let reusable { return reusable }
        let database = try Database(path: path, options: options)
        // Belt and braces: a read closure cannot write through this connection.
        try database.execute("PRAGMA query_only = ON")
        lock.withLock { openCount += 1 }
        return database
    }

    private func checkIn(_ database: Database) {
        lock.withLock {
            // After close(), the connection is dropped (and so closed) instead of kept.
            if isClosed { openCount -= 1 } else { idle.append(database) }
        }
    }
}
