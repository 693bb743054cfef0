import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// What an app developer's misuse of the library, or an unlucky timing, used to break: each a
/// promise of the documentation that held only for careful callers.
@Suite("The library under misuse and unlucky timing", .timeLimit(.minutes(10)))
struct LibraryMisuseTests {
    static func framework(_ id: String) -> Framework {
        Framework(id: id, name: "n", imageName: "i", urlString: "https://example.com/\(id)", description: "d")
    }

    /// A gate a long read or write waits at (at most four minutes, so a failing test cannot hang).
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let entered = DispatchSemaphore(value: 0)
        func pass() {
            entered.signal()
            _ = semaphore.wait(timeout: .now() + 240)
        }
        func waitUntilEntered() async {
            await withCheckedContinuation { c in
                DispatchQueue.global().async {
                    self.entered.wait(); c.resume()
                }
            }
        }
        func open() { semaphore.signal() }
    }

    /// Cancels `task` while `gate` holds the operation ahead of it, and whether `task` ended
    /// before the gate opened (it is opened afterwards either way).
    static func cancelEndsBeforeTheGateOpens<T: Sendable>(_ task: Task<T, any Error>, _ gate: Gate) async -> Bool {
        task.cancel()
        let finished = LockedBox(false)
        let watcher = Task {
            _ = await task.result
            finished.withLock { $0 = true }
        }
        // The gate opens only after this wait: a task that waited for it never ends in time, and
        // one that did not has minutes on a loaded machine.
        let ended = await eventually(within: 120) { finished.withLock { $0 } }
        gate.open()
        _ = await watcher.value
        return ended
    }

    @Test("two close() calls at once both return (the second waited forever), ten times over")
    func concurrentCloses() async throws {
        for _ in 0..<10 {
            try await withTemporaryDirectory { directory in
                let store = try await Store.open(at: directory.databasePath)
                _ = try await store.frameworks.count() // a reader connection, now idle
                let closed = LockedBox(0)
                let closing = Task {
                    async let one: Void = store.close()
                    async let two: Void = store.close()
                    _ = await (one, two)
                    closed.withLock { $0 = 1 }
                }
                #expect(await eventually(within: 60) { closed.withLock { $0 } == 1 }, "close() hung")
                _ = closing
            }
        }
    }

    @Test("a read cancelled while it waits for a connection returns at once, while the read ahead still runs")
    func cancelledQueuedRead() async throws {
        var configuration = Store.Configuration()
        configuration.maximumReaders = 1
        try await withTemporaryStore(configuration: configuration) { store, _ throws in
            let gate = Gate()
            let long = Task { try await store.read { _ in gate.pass() } }
            await gate.waitUntilEntered()
            let ran = LockedBox(false)
            let queued = Task { try await store.read { _ in ran.withLock { $0 = true } } }
            // Queued behind the long read (the only connection) before it is cancelled.
            #expect(await eventually(within: 60) { store.readers?.waitingReads == 1 })
            // It used to wait for the long read to end: here, until the gate opened.
            #expect(await Self.cancelEndsBeforeTheGateOpens(queued, gate), "the cancelled read waited for the one ahead")
            await #expect(throws: CancellationError.self) { try await queued.value }
            #expect(!ran.withLock { $0 })
            try await long.value
        }
    }

    @Test("a write cancelled while queued returns at once and is never run, while the write ahead still runs")
    func cancelledQueuedWrite() async throws {
        try await withTemporaryStore { store, _ throws in
            let gate = Gate()
            let long = Task { try await store.write { _ in gate.pass() } }
            await gate.waitUntilEntered()
            let queued = Task { try await store.frameworks.insert(Self.framework("queued")) }
            #expect(await eventually(within: 60) { store.writer.queuedWrites == 1 })
            #expect(await Self.cancelEndsBeforeTheGateOpens(queued, gate), "the cancelled write waited for the one ahead")
            await #expect(throws: CancellationError.self) { try await queued.value }
            try await long.value
            #expect(try await store.frameworks.count() == 0)
        }
    }

    @Test("fetchEach whose body fetches the same kind walks each record once (it started over forever)")
    func nestedFetchOfTheSameKind() async throws {
        try await withTemporaryStore { store, _ throws in
            for id in ["a", "b", "c"] { try await store.frameworks.insert(Self.framework(id)) }
            let (visited, inner) = try await store.read { db -> ([String], [Int]) in
                var visited: [String] = [], inner: [Int] = []
                try db.frameworks.fetchEach { framework in
                    visited.append(framework.id)
                    inner.append(try db.frameworks.fetchAll().count)
                    if visited.count > 10 { throw CancellationError() } // the loop it used to be
                }
                return (visited, inner)
            }
            #expect(visited == ["a", "b", "c"])
            #expect(inner == [3, 3, 3])
        }
    }

    @Test("SQL made anew for every call is not kept prepared for the connection's life")
    func statementCacheIsBounded() async throws {
        try await withTemporaryStore { store, _ throws in
            let (count, sum) = try await store.read { db -> (Int, Int64) in
                var sum: Int64 = 0
                for index in 0..<1000 { sum += try db.fetchOne("SELECT \(index)")?[0].integerValue ?? 0 }
                return (db.cachedStatementCount, sum)
            }
            #expect(sum == 499_500)
            #expect(count <= Database.maximumCachedStatements, "\(count) statements kept")
        }
    }

    @Test(
        "execute runs every statement of its SQL, refuses arguments that are not one per placeholder, and says when there is no statement"
    )
    func executeTakesTheWholeSQL() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.write { db in
                // The index was dropped without a word: only the first statement ran.
                try db.execute("CREATE TABLE notes (id TEXT); CREATE INDEX notes_by_id ON notes (id); -- done")
                try db.execute("INSERT INTO notes VALUES ('a'); INSERT INTO notes VALUES ('b')")
            }
            let (indexes, rows) = try await store.read { db in
                (
                    try db.fetchAll("SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'notes_by_id'").count,
                    try db.fetchAll("SELECT id FROM notes ORDER BY id").map { $0[0].textValue }
                )
            }
            #expect(indexes == 1)
            #expect(rows == ["a", "b"])
            func code(_ body: @escaping @Sendable (Database) throws -> Void) async -> Int32? {
                do {
                    try await store.write(body)
                    return nil
                } catch let error as SQLiteError {
                    return error.code
                } catch {
                    return -1
                }
            }
            // Three arguments for four placeholders bound NULL to the fourth.
            #expect(await code { try $0.execute("INSERT INTO events VALUES (?, ?, ?, ?)", ["e", "t", "2026-06-08"]) } == 25)
            #expect(await code { try $0.execute("INSERT INTO notes VALUES (?)", ["a", "b"]) } == 25)
            #expect(await code { try $0.execute("INSERT INTO notes VALUES (?); INSERT INTO notes VALUES (?)", ["c"]) } == 21)
            // "SQLite error 0: not an error".
            #expect(await code { try $0.execute("  -- nothing ") } == 21)
            await #expect(throws: SQLiteError.self) { try await store.read { try $0.fetchAll("SELECT 1; SELECT 2") } }
            #expect(try await store.events.count() == 0)
            #expect(try await store.read { try $0.fetchAll("SELECT id FROM notes") }.count == 2)
            // A long script: one statement after another (it recursed once per statement, and
            // cached each rest of the script).
            let script = (0..<20_000).map { "INSERT INTO notes VALUES ('n\($0)'); -- row \($0)" }.joined(separator: "\n")
            let cached = try await store.write { db -> Int in
                let before = db.cachedStatementCount
                try db.execute(script)
                return db.cachedStatementCount - before
            }
            #expect(cached <= 1)
            #expect(try await store.read { try $0.fetchOne("SELECT count(*) FROM notes")?[0].integerValue } == 20_002)
        }
    }

    struct Thrown: Error {}

    @Test("a write closure may not commit or roll back the store's transaction; its writes are rolled back when it throws")
    func rawTransactionControlInAWrite() async throws {
        try await withTemporaryStore { store, _ throws in
            for statement in ["COMMIT", "END TRANSACTION", "ROLLBACK", "BEGIN"] {
                await #expect(throws: SQLiteError.self) {
                    try await store.write { db in
                        try db.frameworks.insert(Self.framework("early-\(statement)"))
                        // A raw COMMIT made the insert stick although the closure then threw.
                        try db.execute(statement)
                        throw Thrown()
                    }
                }
            }
            #expect(try await store.frameworks.count() == 0)
            // In a batch, each write runs in the writer's savepoint: a closure that released it,
            // or opened one of its name, then threw kept its rows in the batch's commit.
            let gate = Gate()
            let holding = Task { try await store.write { _ in gate.pass() } }
            await gate.waitUntilEntered()
            let batch = ["RELEASE SAVEPOINT batched_write", "SAVEPOINT Batched_Write"].map { statement in
                Task {
                    try await store.write { db in
                        try db.frameworks.insert(Self.framework("kept-by-\(statement)"))
                        try db.execute(statement)
                        throw Thrown()
                    }
                }
            }
            let honest = Task { try await store.frameworks.insert(Self.framework("honest")) }
            #expect(await eventually(within: 60) { store.writer.queuedWrites == 3 })
            gate.open()
            try await holding.value
            for write in batch { await #expect(throws: (any Error).self) { try await write.value } }
            try await honest.value
            #expect(try await store.frameworks.fetchAll().map(\.id) == ["honest"])
            try await store.frameworks.delete("honest")
            // Savepoints stay the closure's to use.
            try await store.write { db in
                try db.execute("SAVEPOINT mine")
                try db.frameworks.insert(Self.framework("gone"))
                try db.execute("ROLLBACK TO SAVEPOINT mine")
                try db.execute("RELEASE SAVEPOINT mine")
                try db.frameworks.insert(Self.framework("kept"))
            }
            #expect(try await store.frameworks.fetchAll().map(\.id) == ["kept"])
        }
    }

    /// SQLite itself ends a transaction on `OR ROLLBACK` and `RAISE(ROLLBACK)`. A closure that
    /// swallowed that statement's error went on in autocommit mode: each later statement
    /// committed on its own and unobserved, while the write threw "cannot commit - no
    /// transaction is active" (in a batch, "no such savepoint"). Now every later statement
    /// fails, the write fails, and nothing of it is kept or reported: alone or in a batch.
    @Test("a write whose transaction SQLite rolled back keeps nothing after it, alone or in a batch, and reports nothing")
    func transactionEndedBySQLite() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Self.framework("dup"))
            try await store.write { db in
                try db.execute(
                    "CREATE TEMP TRIGGER boom BEFORE INSERT ON frameworks WHEN new.id = 'boom' BEGIN SELECT RAISE(ROLLBACK, 'boom'); END"
                )
            }
            let stream = await store.changesFromNow()
            let endings = [
                "INSERT OR ROLLBACK INTO frameworks (id, name, image_name, url_string, description) VALUES ('dup', 'n', 'i', 'u', 'd')",
                "INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES ('boom', 'n', 'i', 'u', 'd')",
            ]
            @Sendable func offending(_ ending: String, _ tag: String) -> @Sendable (Database) throws -> Void {
                { db in
                    try db.frameworks.insert(Self.framework("before-\(tag)"))
                    try? db.execute(ending)
                    try? db.frameworks.insert(Self.framework("after-\(tag)"))
                    try? db.execute("UPDATE frameworks SET name = 'changed' WHERE id = 'dup'")
                }
            }
            for (index, ending) in endings.enumerated() {
                do {
                    try await store.write(offending(ending, "alone-\(index)"))
                    Issue.record("a write whose transaction was rolled back returned")
                } catch let error as SQLiteError {
                    #expect(error.extendedCode == 516, "\(error)")
                }
                // In a batch: held behind a write at a gate, then run with an honest write.
                let gate = Gate()
                let holding = Task { try await store.write { _ in gate.pass() } }
                await gate.waitUntilEntered()
                let bad = Task { try await store.write(offending(ending, "batch-\(index)")) }
                let honest = Task { try await store.frameworks.insert(Self.framework("honest-\(index)")) }
                #expect(await eventually(within: 60) { store.writer.queuedWrites == 2 })
                gate.open()
                try await holding.value
                await #expect(throws: SQLiteError.self) { try await bad.value }
                let honestSucceeded: Bool
                do {
                    try await honest.value
                    honestSucceeded = true
                } catch let error as SQLiteError {
                    // Not the culprit's own error, which it did not cause.
                    #expect(error.extendedCode == 516 && error.message.contains("another write's error"), "\(error)")
                    honestSucceeded = false
                }
                let present = try await store.frameworks.find("honest-\(index)") != nil
                #expect(present == honestSucceeded, "answered \(honestSucceeded), stored \(present)")
            }
            let ids = try await store.frameworks.fetchAll().map(\.id)
            #expect(ids.allSatisfy { $0 == "dup" || $0.hasPrefix("honest-") }, "\(ids)")
            #expect(try await store.frameworks.find("dup")?.name == Self.framework("dup").name)
            // The store writes on, and its observers heard only what was kept.
            try await store.frameworks.insert(Self.framework("marker"))
            var heard: [String] = []
            for await batch in stream {
                heard += batch.changes.map(\.key)
                if heard.contains("marker") { break }
            }
            #expect(heard.allSatisfy { $0 == "marker" || $0.hasPrefix("honest-") }, "\(heard)")
        }
    }

    @Test("a read writes nothing, even after PRAGMA query_only = OFF, on a file and in memory")
    func readsWriteNothing() async throws {
        var configuration = Store.Configuration()
        configuration.maximumReaders = 1
        let onFile: @Sendable (Store) async throws -> Void = { store throws in
            let changes = await store.changesFromNow()
            for sql in [
                "PRAGMA query_only = OFF", "INSERT INTO frameworks VALUES ('sneak', 'n', 'i', 'u', 'd')", "COMMIT",
            ] {
                await #expect(throws: SQLiteError.self) { try await store.read { try $0.execute(sql) } }
            }
            // The one connection is still read-only for the next read.
            await #expect(throws: SQLiteError.self) {
                try await store.read { try $0.execute("INSERT INTO frameworks VALUES ('sneak2', 'n', 'i', 'u', 'd')") }
            }
            #expect(try await store.frameworks.count() == 0)
            _ = changes
        }
        try await withTemporaryStore(configuration: configuration) { store, _ throws in try await onFile(store) }
        let memory = try await Store.inMemory()
        await #expect(throws: SQLiteError.self) {
            try await memory.read { try $0.execute("INSERT INTO frameworks VALUES ('m', 'n', 'i', 'u', 'd')") }
        }
        for pragma in ["PRAGMA query_only = OFF", "PRAGMA query_only = ON", "PRAGMA user_version = 7"] {
            await #expect(throws: SQLiteError.self) { try await memory.read { try $0.execute(pragma) } }
        }
        #expect(try await memory.frameworks.count() == 0)
        // And writes still write, after those reads.
        try await memory.frameworks.insert(Self.framework("after"))
        #expect(try await memory.frameworks.count() == 1)
        await memory.close()
    }

    @Test("two records whose keys are canonically equivalent (NFC and NFD é), changed in one write, are two changes")
    func canonicallyEquivalentKeysAreTwoChanges() async throws {
        try await withTemporaryStore { store, _ throws in
            let changes = await store.changesFromNow()
            try await store.write { db in
                try db.frameworks.insert(Self.framework("\u{E9}"))
                try db.frameworks.insert(Self.framework("e\u{301}"))
            }
            var iterator = changes.makeAsyncIterator()
            let batch = try #require(await iterator.next())
            // The second was folded into the first: one change for two records.
            #expect(batch.changes.map { Array($0.key.unicodeScalars) } == [["\u{E9}"], ["e", "\u{301}"]])
        }
    }

    @Test("a sync into a store whose file was removed or replaced under it fails, writing nothing (it reported 'applied')")
    func syncIntoAMovedStore() async throws {
        try await withTemporaryDirectory { directory in
            let feed = directory.file("feed.json")
            try Data(
                #"{"version": 1, "frameworks": [{"id": "a", "name": "A", "imageName": "a", "urlString": "https://e.com/a", "description": "d"}]}"#
                    .utf8
            ).write(to: URL(fileURLWithPath: feed))
            for replace in [false, true] {
                let path = directory.file("store-\(replace).sqlite")
                let store = try await Store.open(at: path)
                #expect(try await store.frameworks.count() == 0) // a reader connection open, as mid-command
                #expect(rename(path, path + ".moved") == 0)
                if replace { try Data().write(to: URL(fileURLWithPath: path)) }
                await #expect(throws: StoreError.storeMoved(path: path)) { try await store.sync(from: FeedSource(feed)) }
                await store.close()
                // Nothing reached the file the store had open, under its new name.
                try await withStore(at: path + ".moved") { moved throws in #expect(try await moved.frameworks.count() == 0) }
            }
        }
    }
}
