import Foundation
import Testing

@testable import Store

@Suite("Events in a file store")
struct EventStoreTests {
    /// Events around June 2026, including the days just outside it.
    static let events: [Event] = [
        Event(id: "e-may", title: "Last of May", date: Fixtures.date("2026-05-31")),
        Event(id: "e-1", title: "First of June", date: Fixtures.date("2026-06-01"), notes: "Hall A"),
        Event(id: "e-2", title: "Also first of June", date: Fixtures.date("2026-06-01")),
        Event(id: "e-wwdc", title: "WWDC keynote", date: Fixtures.date("2026-06-08"), notes: "Hall A"),
        Event(id: "e-lab", title: "Labs", date: Fixtures.date("2026-06-08")),
        Event(id: "e-bof", title: "Get-together", date: Fixtures.date("2026-06-08")),
        Event(id: "e-30", title: "Last of June", date: Fixtures.date("2026-06-30")),
        Event(id: "e-jul", title: "First of July", date: Fixtures.date("2026-07-01")),
    ]

    private func withEvents(_ body: (Store) async throws -> Void) async throws {
        try await withTemporaryStore { store, _ throws in
            for event in Self.events { try await store.events.insert(event) }
            try await body(store)
        }
    }

    @Test func insertsAndFindsAnEvent() async throws {
        try await withEvents { store throws in
            #expect(try await store.events.find("e-wwdc") == Self.events[3])
            #expect(try await store.events.find("e-1")?.notes == "Hall A")
            #expect(try await store.events.find("e-2")?.notes == nil)
            #expect(try await store.events.find("nope") == nil)
            #expect(try await store.events.count() == Self.events.count)
        }
    }

    @Test func fetchesAllByDateThenID() async throws {
        try await withEvents { store throws in
            let expected = Self.events.sorted { ($0.date, $0.id) < ($1.date, $1.id) }
            #expect(try await store.events.fetchAll() == expected)
        }
    }

    @Test func findsTheEventsOfOneDayOrderedByID() async throws {
        try await withEvents { store throws in
            let day = Fixtures.date("2026-06-08")
            let expected = Self.events.filter { $0.date == day }.map(\.id).sorted()
            #expect(expected.count == 3)
            #expect(try await store.events.on(day).map(\.id) == expected)
            #expect(try await store.events.on(Fixtures.date("2026-06-09")).isEmpty)
        }
    }

    @Test func findsTheEventsOfAMonthIncludingItsFirstAndLastDays() async throws {
        try await withEvents { store throws in
            let june = Fixtures.month("2026-06")
            let expected = Self.events.filter { $0.date.yearMonth == june }.sorted { ($0.date, $0.id) < ($1.date, $1.id) }
            let found = try await store.events.inMonth(june)
            #expect(found == expected)
            #expect(found.first?.date == june.firstDay)
            #expect(found.last?.date == june.lastDay)
            #expect(try await store.events.inMonth(Fixtures.month("2026-08")).isEmpty)
        }
    }

    @Test func countsTheEventsOfEachDayOfAMonth() async throws {
        try await withEvents { store throws in
            let june = Fixtures.month("2026-06")
            let expected = Dictionary(grouping: Self.events.filter { $0.date.yearMonth == june }, by: \.date)
                .map { DateCount(date: $0.key, count: $0.value.count) }
                .sorted { $0.date < $1.date }
            #expect(try await store.events.dates(in: june) == expected)
            let may = try await store.events.dates(in: Fixtures.month("2026-05"))
            #expect(may == [DateCount(date: Fixtures.date("2026-05-31"), count: 1)])
        }
    }

    @Test func movesAnEventToAnotherDay() async throws {
        try await withEvents { store throws in
            var moved = Self.events[3]
            moved.date = Fixtures.date("2026-06-09")
            moved.notes = nil
            try await store.events.update(moved)
            #expect(try await store.events.find(moved.id) == moved)
            #expect(try await store.events.on(Fixtures.date("2026-06-08")).map(\.id) == ["e-bof", "e-lab"])
            #expect(try await store.events.on(Fixtures.date("2026-06-09")) == [moved])
        }
    }

    @Test func refusesToInsertATakenIDOrUpdateAMissingOne() async throws {
        try await withEvents { store throws in
            await #expect(throws: StoreError.recordExists(kind: .event, key: "e-1")) {
                try await store.events.insert(Event(id: "e-1", title: "Copy", date: Fixtures.date("2026-01-01")))
            }
            await #expect(throws: StoreError.recordNotFound(kind: .event, key: "e-404")) {
                try await store.events.update(Event(id: "e-404", title: "Ghost", date: Fixtures.date("2026-01-01")))
            }
            #expect(try await store.events.count() == Self.events.count)
        }
    }

    @Test func deletesAnEventOnlyOnce() async throws {
        try await withEvents { store throws in
            #expect(try await store.events.delete("e-lab"))
            #expect(try await !store.events.delete("e-lab"))
            #expect(try await store.events.on(Fixtures.date("2026-06-08")).map(\.id) == ["e-bof", "e-wwdc"])
            #expect(try await store.events.count() == Self.events.count - 1)
        }
    }

    /// Whoever writes the row (another process, the sqlite3 shell), the table itself refuses a
    /// date that is not a real `YYYY-MM-DD` day; reading one back would otherwise fail.
    @Test(arguments: ["2026-02-30", "2023-02-29", "2026-04-31", "2026-13-01", "2026-6-8", "someday", "2026-06-08T10:00:00Z"])
    func databaseRefusesAnEventDateThatIsNotARealDay(date: String) async throws {
        try await withTemporaryStore { store, _ throws in
            let error = await #expect(throws: SQLiteError.self) {
                try await store.write {
                    try $0.execute("INSERT INTO events (id, title, date) VALUES ('x', 'x', ?)", [.text(date)])
                }
            }
            #expect(error?.extendedCode == 275) // SQLITE_CONSTRAINT_CHECK
            #expect(try await store.events.count() == 0)
        }
    }
}
