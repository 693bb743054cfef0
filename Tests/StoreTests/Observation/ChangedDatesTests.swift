import Foundation
import Testing

@testable import Store

/// `store.events.changedDates()`: one set of dates per committed transaction that changed
/// events — what a calendar needs to reload exactly the days that changed.
@Suite("Changed dates of events", .timeLimit(.minutes(10)))
struct ChangedDatesTests {
    struct Rollback: Error {}

    static func dates(_ texts: String...) -> Set<CalendarDate> { Set(texts.map(Fixtures.date)) }

    @Test func anInsertEmitsTheEventsDate() async throws {
        try await withTemporaryStore { store, _ throws in
            let dates = StreamProbe(store.events.changedDates())
            try await store.events.insert(ObservationFixtures.event("e", on: "2026-06-08"))
            #expect(try await dates.next() == Self.dates("2026-06-08"))
        }
    }

    @Test func aChangeCommittedRightAfterTheCallIsReported() async throws {
        try await withTemporaryStore { store, _ throws in
            for round in 0..<20 {
                let dates = StreamProbe(store.events.changedDates())
                let day = "2026-03-\(String(format: "%02d", round + 1))"
                try await store.events.insert(ObservationFixtures.event("e\(round)", on: day))
                let first = try await dates.next()
                #expect(first == Self.dates(day), "round \(round)")
                dates.cancel()
            }
        }
    }

    @Test func movingAnEventEmitsBothItsOldAndItsNewDate() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.events.insert(ObservationFixtures.event("e", on: "2026-06-08"))
            let dates = StreamProbe(store.events.changedDates())
            try await store.events.update(ObservationFixtures.event("e", on: "2026-07-15"))
            #expect(try await dates.next() == Self.dates("2026-06-08", "2026-07-15"))

            // An update that keeps the date emits that one date.
            try await store.events.update(ObservationFixtures.event("e", on: "2026-07-15", title: "Renamed"))
            #expect(try await dates.next() == Self.dates("2026-07-15"))
        }
    }

    @Test func deletingAnEventEmitsItsDate() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.events.insert(ObservationFixtures.event("e", on: "2026-12-31"))
            let dates = StreamProbe(store.events.changedDates())
            #expect(try await store.events.delete("e"))
            #expect(try await dates.next() == Self.dates("2026-12-31"))

            // Deleting nothing changes nothing: the next element is the next real change.
            #expect(try await store.events.delete("e") == false)
            try await store.events.insert(ObservationFixtures.event("f", on: "2027-01-01"))
            #expect(try await dates.next() == Self.dates("2027-01-01"))
        }
    }

    @Test func oneTransactionEmitsAllItsDatesInOneElement() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.events.insert(ObservationFixtures.event("moved", on: "2026-01-01"))
            try await store.events.insert(ObservationFixtures.event("gone", on: "2026-01-02"))
            let dates = StreamProbe(store.events.changedDates())
            try await store.write { db in
                try db.events.insert(ObservationFixtures.event("new", on: "2026-02-10"))
                try db.events.update(ObservationFixtures.event("moved", on: "2026-02-11"))
                try db.events.delete("gone")
                try db.frameworks.insert(Fixtures.framework("not-an-event"))
            }
            #expect(try await dates.next() == Self.dates("2026-02-10", "2026-01-01", "2026-02-11", "2026-01-02"))
            #expect(try await dates.untakenAfterWaiting(0.3).isEmpty)
        }
    }

    @Test func aSyncEmitsEveryDateItTouchedAtOnce() async throws {
        try await withTemporaryStore { store, directory throws in
            // Local events: one the feed moves, one it leaves alone, one it deletes (prefer-remote).
            try await store.events.insert(ObservationFixtures.event("moves", on: "2025-12-01"))
            try await store.events.insert(ObservationFixtures.event("same", on: "2025-12-02"))
            try await store.events.insert(ObservationFixtures.event("local-only", on: "2025-12-03"))

            var events = (0..<40).map { index -> Event in
                let day = CalendarDate(year: 2026, month: 1 + index / 14, day: 1 + index % 14)!
                return Event(id: "feed-\(index)", title: "Feed event \(index)", date: day)
            }
            events.append(ObservationFixtures.event("moves", on: "2026-05-05"))
            events.append(ObservationFixtures.event("same", on: "2025-12-02"))
            let feed = try ObservationFixtures.writeFeed(
                events: events, frameworks: [Fixtures.framework("f")], deletedEvents: ["local-only"],
                to: "feed.json", in: directory)

            let dates = StreamProbe(store.events.changedDates())
            var options = SyncOptions()
            options.policy = .preferRemote
            _ = try await store.sync(from: .file(feed), options: options)

            let emitted = try await dates.next()
            var expected = Set(events.filter { $0.id != "same" }.map(\.date))
            expected.insert(Fixtures.date("2025-12-01")) // the old date of the moved event
            expected.insert(Fixtures.date("2025-12-03")) // the date of the deleted one
            #expect(emitted == expected, "missing \(expected.subtracting(emitted)), extra \(emitted.subtracting(expected))")
            #expect(emitted.count == 43)
            // All at once: no second element for the same sync.
            #expect(try await dates.untakenAfterWaiting(0.4).isEmpty)
        }
    }

    @Test func aRolledBackWriteAndOtherKindsEmitNothing() async throws {
        try await withTemporaryStore { store, _ throws in
            let dates = StreamProbe(store.events.changedDates())
            let failed = await outcome {
                try await store.write { db in
                    try db.events.insert(ObservationFixtures.event("ghost", on: "2026-04-01"))
                    throw Rollback()
                }
            }
            #expect(throws: Rollback.self) { try failed.get() }
            try await store.frameworks.insert(Fixtures.framework("f"))
            try await store.orders.insert(Fixtures.order("o", prices: ["2.50"]))
            try await store.events.insert(ObservationFixtures.event("real", on: "2026-04-02"))
            // The first element is the committed event change, nothing before it.
            #expect(try await dates.next() == Self.dates("2026-04-02"))
            #expect(try await dates.untakenAfterWaiting(0.3).isEmpty)
        }
    }

    @Test func anEventMovedInASecondStoreOnTheSameFileArrives() async throws {
        try await withTemporaryStore { observer, directory throws in
            try await observer.events.insert(ObservationFixtures.event("e", on: "2026-06-08"))
            try await withStore(at: directory.databasePath) { writer throws in
                let dates = StreamProbe(observer.events.changedDates())
                // Another process's commit is seen once the subscription's start is read, a
                // moment after the call: a first change of this store's own shows it was.
                try await observer.events.insert(ObservationFixtures.event("local", on: "2026-01-01"))
                #expect(try await dates.next() == Self.dates("2026-01-01"))
                try await writer.events.update(ObservationFixtures.event("e", on: "2026-06-09"))
                #expect(try await dates.next() == Self.dates("2026-06-08", "2026-06-09"))
                #expect(try await writer.events.delete("e"))
                #expect(try await dates.next() == Self.dates("2026-06-09"))
            }
        }
    }

    @Test func finishesOnCancellationAndOnClose() async throws {
        try await withTemporaryStore { store, _ throws in
            let cancelled = StreamProbe(store.events.changedDates())
            let closed = StreamProbe(store.events.changedDates())
            #expect(await eventually { store.observerCount == 2 })
            cancelled.cancel()
            guard case .finished? = await cancelled.waitForEnd() else {
                Issue.record("not finished on cancellation: \(String(describing: cancelled.ended))")
                return
            }
            #expect(await eventually { store.observerCount == 1 })
            await store.close()
            guard case .finished? = await closed.waitForEnd() else {
                Issue.record("not finished on close: \(String(describing: closed.ended))")
                return
            }
            #expect(store.observerCount == 0)
            #expect(cancelled.all.isEmpty && closed.all.isEmpty)
        }
    }
}
