import Foundation
import Testing

@testable import Store

@Suite("Event date queries use events_by_date")
struct EventIndexTests {
    /// The SQL of `EventTable.on`, `inMonth` and `dates(in:)`, with arguments; keep in step with
    /// Sources/Store/Tables/EventTable.swift.
    static let queries: [(name: String, sql: String, arguments: [SQLValue])] = [
        ("on", "SELECT id, title, date, notes FROM events WHERE date = ? ORDER BY date, id", ["2026-06-08"]),
        (
            "inMonth", "SELECT id, title, date, notes FROM events WHERE date >= ? AND date <= ? ORDER BY date, id",
            ["2026-06-01", "2026-06-30"]
        ),
        (
            "dates", "SELECT date, count(*) FROM events WHERE date >= ? AND date <= ? GROUP BY date ORDER BY date",
            ["2026-06-01", "2026-06-30"]
        ),
    ]

    @Test(arguments: 0..<3)
    func searchesTheIndexInsteadOfScanningTheTable(query index: Int) async throws {
        let query = Self.queries[index]
        try await withTemporaryStore { store, _ throws in
            try await store.write { db in
                let start = Fixtures.date("2026-01-01")
                for number in 0..<500 {
                    let date = start.adding(days: number % 365)!
                    try db.events.insert(Event(id: "e-\(number)", title: "Event \(number)", date: date))
                }
            }
            let plan = try await store.read { db in
                try db.fetchAll("EXPLAIN QUERY PLAN " + query.sql, query.arguments).compactMap { $0["detail"]?.textValue }
            }
            try #require(!plan.isEmpty)
            let usesIndex = plan.contains {
                $0.contains("USING INDEX events_by_date") || $0.contains("USING COVERING INDEX events_by_date")
            }
            #expect(usesIndex, "\(query.name): \(plan)")
            #expect(!plan.contains { $0.contains("SCAN events") }, "\(query.name): \(plan)")
            // The index also gives the order: no sorting step.
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(query.name): \(plan)")
        }
    }

    @Test func countsDatesFromTheIndexAlone() async throws {
        let query = Self.queries[2]
        try await withTemporaryStore { store, _ throws in
            let plan = try await store.read { db in
                try db.fetchAll("EXPLAIN QUERY PLAN " + query.sql, query.arguments).compactMap { $0["detail"]?.textValue }
            }
            #expect(plan.contains { $0.contains("USING COVERING INDEX events_by_date") }, "\(plan)")
        }
    }

    @Test func queriesCheckedHereReturnWhatTheTableReturns() async throws {
        // Each query above returns what the EventTable method returns, so the plan checked is
        // the plan of the real query.
        try await withTemporaryStore { store, _ throws in
            try await store.events.insert(Event(id: "e-1", title: "A", date: Fixtures.date("2026-06-08")))
            try await store.events.insert(Event(id: "e-2", title: "B", date: Fixtures.date("2026-06-08"), notes: "n"))
            try await store.events.insert(Event(id: "e-3", title: "C", date: Fixtures.date("2026-06-30")))
            let (direct, viaTable) = try await store.read { db in
                let direct = try Self.queries.map { try db.fetchAll($0.sql, $0.arguments).map(\.values) }
                func row(_ event: Event) -> [SQLValue] {
                    [.text(event.id), .text(event.title), .text(event.date.description), event.notes.map(SQLValue.text) ?? .null]
                }
                let viaTable: [[[SQLValue]]] = [
                    try db.events.on(Fixtures.date("2026-06-08")).map(row),
                    try db.events.inMonth(Fixtures.month("2026-06")).map(row),
                    try db.events.dates(in: Fixtures.month("2026-06")).map {
                        [.text($0.date.description), .integer(Int64($0.count))]
                    },
                ]
                return (direct, viaTable)
            }
            #expect(direct == viaTable)
        }
    }
}
