import Foundation
import Testing

@testable import Store

/// The change log keeps the last `retainedTransactions`. An observer whose store did not read the
/// log while more than that committed elsewhere (its process suspended, say) used to go on
/// silently past the pruned ones; a value observation kept a stale value for good.
@Suite("Change log: transactions pruned before they were read", .timeLimit(.minutes(10)))
struct ChangeLogGapTests {
    @Test("the next batch counts the missed transactions; a value observation fetches again")
    func prunedTransactionsAreCounted() async throws {
        var configuration = Store.Configuration()
        // Never polls: only this store's own commit makes it read the log.
        configuration.observationPollInterval = .seconds(3600)
        try await withTemporaryStore(configuration: configuration) { store, directory throws in
            let changes = await store.changesFromNow(of: [.framework])
            var batches = changes.makeAsyncIterator()
            var values = store.frameworks.observe(id: "x").makeAsyncIterator()
            #expect(try await values.next() == .some(nil))

            // Another connection: "x" first, then more transactions than the log keeps.
            let other = try Database(path: directory.databasePath, options: .init())
            try other.executeScript("PRAGMA synchronous = OFF")
            try other.inTransaction(.immediate) {
                try other.frameworks.insert(Fixtures.framework("x"))
                _ = try ChangeLogTable(db: other).append(
                    [Change(kind: .framework, key: "x", operation: .insert)], committedAt: Date())
            }
            let filler = Int(ChangeLogTable.retainedTransactions) + 200
            for index in 0..<filler {
                try other.inTransaction(.immediate) {
                    _ = try ChangeLogTable(db: other).append(
                        [Change(kind: .order, key: "o-\(index)", operation: .delete)], committedAt: Date())
                }
            }
            other.close()

            // This store's own commit makes its monitor read the log: "x" and the first
            // fillers are gone from it.
            try await store.frameworks.insert(Fixtures.framework("z"))
            let batch = try #require(await batches.next())
            #expect(batch.missedTransactions >= 200, "\(batch.transaction), missed \(batch.missedTransactions)")
            #expect(!batch.changes.contains { $0.key == "x" })
            // The value of "x" was never announced; the gap makes the observation fetch it.
            let value = try await values.next()
            #expect(value??.id == "x")
        }
    }
}
