import Foundation
import Testing

@testable import Store

/// `store.changes(of:)`: one `ChangeBatch` per committed transaction, the stream `storectl watch`
/// prints.
@Suite("Change batches", .timeLimit(.minutes(10)))
struct ChangeBatchTests {
    struct Rollback: Error {}

    @Test func emitsOneBatchPerCommittedTransactionInOrder() async throws {
        try await withTemporaryStore { store, _ throws in
            let changes = StreamProbe(store.changes())
            #expect(await eventually { store.observerCount == 1 })
            try await store.frameworks.insert(Fixtures.framework("a"))
            try await store.write { db in
                try db.frameworks.update(Fixtures.framework("a", name: "New"))
                try db.events.insert(ObservationFixtures.event("e", on: "2026-06-08"))
            }
            _ = await outcome {
                try await store.write { db in
                    try db.frameworks.delete("a"); throw Rollback()
                }
            }
            try await store.events.update(ObservationFixtures.event("e", on: "2026-06-09"))
            try await store.orders.insert(Fixtures.order("o", prices: ["1.00"]))
            try await store.frameworks.delete("a")

            var batches: [ChangeBatch] = []
            for _ in 0..<5 { batches.append(try await changes.next()) }
            #expect(
                batches.map(\.changes) == [
                    [Change(kind: .framework, key: "a", operation: .insert)],
                    [
                        Change(kind: .framework, key: "a", operation: .update),
                        Change(kind: .event, key: "e", operation: .insert, dates: [Fixtures.date("2026-06-08")]),
                    ],
                    [
                        Change(
                            kind: .event, key: "e", operation: .update,
                            dates: [Fixtures.date("2026-06-08"), Fixtures.date("2026-06-09")])
                    ],
                    [Change(kind: .order, key: "o", operation: .insert)],
                    [Change(kind: .framework, key: "a", operation: .delete)],
                ])
            let transactions = batches.map(\.transaction)
            #expect(transactions == transactions.sorted() && Set(transactions).count == 5, "\(transactions)")
            #expect(batches[1].kinds == [.framework, .event])
            #expect(try await changes.untakenAfterWaiting(0.3).isEmpty)
        }
    }

    @Test func onlyReportsTheKindsAskedFor() async throws {
        try await withTemporaryStore { store, _ throws in
            let events = StreamProbe(store.changes(of: [.event]))
            #expect(await eventually { store.observerCount == 1 })
            try await store.write { db in
                try db.frameworks.insert(Fixtures.framework("f"))
                try db.events.insert(ObservationFixtures.event("e", on: "2026-06-08"))
            }
            try await store.frameworks.delete("f")
            try await store.images.put("https://example.com/i.png", data: Data([1, 2, 3]), contentType: "image/png")
            try await store.events.delete("e")
            #expect(
                try await events.next().changes == [
                    Change(kind: .event, key: "e", operation: .insert, dates: [Fixtures.date("2026-06-08")])
                ])
            #expect(
                try await events.next().changes == [
                    Change(kind: .event, key: "e", operation: .delete, dates: [Fixtures.date("2026-06-08")])
                ])
            #expect(try await events.untakenAfterWaiting(0.3).isEmpty)
        }
    }

    @Test func finishesOnCloseAndReleasesOnCancellation() async throws {
        try await withTemporaryStore { store, _ throws in
            let cancelled = StreamProbe(store.changes())
            let closed = StreamProbe(store.changes(of: [.framework]))
            #expect(await eventually { store.observerCount == 2 })
            cancelled.cancel()
            #expect(await eventually { store.observerCount == 1 })
            guard case .finished? = await cancelled.waitForEnd() else {
                Issue.record("not finished on cancellation: \(String(describing: cancelled.ended))")
                return
            }
            await store.close()
            guard case .finished? = await closed.waitForEnd() else {
                Issue.record("not finished on close: \(String(describing: closed.ended))")
                return
            }
            #expect(store.observerCount == 0)
            // A stream asked for after the close finishes at once.
            let late = StreamProbe(store.changes())
            guard case .finished? = await late.waitForEnd() else {
                Issue.record("a stream of a closed store did not finish: \(String(describing: late.ended))")
                return
            }
        }
    }
}
