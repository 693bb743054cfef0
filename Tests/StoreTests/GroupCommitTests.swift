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
}
