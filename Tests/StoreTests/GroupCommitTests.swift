import Foundation
import Testing

@testable import Store

/// `Store.Configuration.maximumWritesPerTransaction`: group commit on (the default), capped,
/// and off. Every logged transaction writes one `change_log` row, so the rows count the
/// transactions that carried the writes.
@Suite("GroupCommit")
struct GroupCommitTests {
    private static func configuration(maximumWritesPerTransaction: Int) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.maximumWritesPerTransaction = maximumWritesPerTransaction
        return configuration
    }

    private static func loggedTransactions(_ store: Store) async throws -> Int64 {
        try await store.read { try $0.integer("SELECT count(*) FROM change_log") } ?? -1
    }

    @Test func defaultsToGroupCommit() {
        #expect(Store.Configuration().maximumWritesPerTransaction > 1)
    }

    @Test func offGivesEveryConcurrentWriteItsOwnTransaction() async throws {
        try await withTemporaryStore(configuration: Self.configuration(maximumWritesPerTransaction: 1)) { store, _ throws in
            try await writeConcurrently(store, writesPerTask: 50)
            #expect(try await store.frameworks.count() == 8 * 50)
            #expect(try await Self.loggedTransactions(store) == 8 * 50)
        }
    }

    /// Holds the writer while `count` single-record writes queue up behind it, then lets them
    /// all run.
    private static func queueWritesBehindAHeldWriter(_ store: Store, count: Int) async throws {
        let held = await HeldWriter(store)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for number in 0..<count {
                group.addTask { try await store.frameworks.insert(Fixtures.framework("queued-\(number)")) }
            }
            try await held.release(once: count)
            try await group.waitForAll()
        }
        #expect(try await store.frameworks.count() == 1 + count)
    }

    @Test func onCommitsTheWritesQueuedMeanwhileInOneTransaction() async throws {
        try await withTemporaryStore { store, _ throws in
            try await Self.queueWritesBehindAHeldWriter(store, count: 10)
            // The holder's transaction, then one for the 10 queued writes.
            #expect(try await Self.loggedTransactions(store) == 2)
        }
    }

    @Test func aCapSplitsQueuedWritesIntoTransactionsOfAtMostThatMany() async throws {
        try await withTemporaryStore(configuration: Self.configuration(maximumWritesPerTransaction: 4)) { store, _ throws in
            try await Self.queueWritesBehindAHeldWriter(store, count: 10)
            // The holder's, then 4 + 4 + 2.
            #expect(try await Self.loggedTransactions(store) == 1 + 3)
            let sizes = try await store.read { try ChangeLogTable(db: $0).batches(after: 0).map(\.changes.count) }
            #expect(sizes == [1, 4, 4, 2])
        }
    }

    @Test func offStillFailsOnlyTheFailingWrite() async throws {
        try await withTemporaryStore(configuration: Self.configuration(maximumWritesPerTransaction: 1)) { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("taken", name: "Original"))
            let outcomes = try await writeTenOneFailing(store)
            try await expectOnlyTheDuplicateFailed(outcomes, in: store)
            #expect(try await store.frameworks.count() == tenIDsOneTaken.count)
            // One transaction per successful write, plus the first insert; none for the failure.
            #expect(try await Self.loggedTransactions(store) == Int64(tenIDsOneTaken.count))
        }
    }

    /// Ten rerunnable writes queued behind a held writer run in one transaction without
    /// savepoints. The fifth first inserts "partial", then fails on a duplicate id: the
    /// transaction is rolled back and the batch runs again, each write in its savepoint, so the
    /// five up to the failing one run twice, the five after it once, and the outcome is what
    /// savepoints throughout would have given.
    @Test func aFailingRerunnableWriteRollsBackAndRerunsTheBatchUpToIt() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("taken", name: "Original"))
            let runs = Locked([String: Int]())
            let held = await HeldWriter(store)
            let outcomes = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for (number, id) in tenIDsOneTaken.enumerated() {
                    group.addTask {
                        do {
                            try await store.writer.write(rerunnable: true) { (db: Database) throws -> Void in
                                runs.withLock { $0[id, default: 0] += 1 }
                                if id == "taken" { try db.frameworks.insert(Fixtures.framework("partial")) }
                                try db.frameworks.insert(Fixtures.framework(id, name: "New"))
                            }
                            return (id, true)
                        } catch {
                            return (id, false)
                        }
                    }
                    // Queued in this order: wait for each before posting the next.
                    _ = await eventually { store.writer.queuedWrites == number + 1 }
                }
                try await held.release(once: tenIDsOneTaken.count)
                return try await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
            }
            #expect(outcomes.filter { !$0.value }.map(\.key) == ["taken"])
            #expect(try await store.frameworks.find("taken")?.name == "Original")
            #expect(try await store.frameworks.find("partial") == nil)
            #expect(try await store.frameworks.count() == 1 + 1 + 9)
            let counts = runs.current
            for (number, id) in tenIDsOneTaken.enumerated() {
                #expect(counts[id] == (number <= 4 ? 2 : 1), "\(id) ran \(counts[id] ?? 0) times")
            }
            // Observers saw each new record once, in one transaction, and nothing of the failure.
            // (Three transactions: "taken"'s, the holder's, then the ten.)
            let batches = try await store.read { try ChangeLogTable(db: $0).batches(after: 0) }
            #expect(batches.count == 3)
            let keys = batches.last?.changes.map(\.key) ?? []
            #expect(keys.sorted() == tenIDsOneTaken.filter { $0 != "taken" }.sorted())
        }
    }

    /// A write that is not rerunnable (any `store.write` body) is never run twice: once it has
    /// run, the writes after it use savepoints, so a failure rolls back only itself.
    @Test func aWriteThatIsNotRerunnableRunsOnceWhateverFailsAfterIt() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("taken", name: "Original"))
            let runs = Locked([String: Int]())
            let ids = ["rerunnable-1", "plain", "rerunnable-2", "taken", "rerunnable-3"]
            let held = await HeldWriter(store)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (number, id) in ids.enumerated() {
                    group.addTask {
                        try? await store.writer.write(rerunnable: id != "plain") { (db: Database) throws -> Void in
                            runs.withLock { $0[id, default: 0] += 1 }
                            try db.frameworks.insert(Fixtures.framework(id, name: "New"))
                        }
                    }
                    _ = await eventually { store.writer.queuedWrites == number + 1 }
                }
                try await held.release(once: ids.count)
                try await group.waitForAll()
            }
            #expect(runs.current == ["rerunnable-1": 1, "plain": 1, "rerunnable-2": 1, "taken": 1, "rerunnable-3": 1])
            #expect(try await store.frameworks.count() == 1 + 1 + 4)
            #expect(try await store.frameworks.find("taken")?.name == "Original")
        }
    }
}
