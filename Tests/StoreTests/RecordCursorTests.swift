import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// The tables' `fetchEach`: every record `fetchAll` returns, in its order, one at a time; an error
/// from the body ends the walk. What `storectl <kind> list` prints from, in bounded memory.
@Suite("Record cursors (fetchEach)")
struct RecordCursorTests {
    /// Ids whose byte order differs from their order of insertion, sharing prefixes.
    static let ids = ["m", "a-1", "é", "a", "ab", "a b", "Z", "b"]

    @Test("frameworks, orders and an app's kind: fetchEach walks fetchAll's records in fetchAll's order")
    func fetchEachIsFetchAllOneAtATime() async throws {
        try await withTemporaryStore(configuration: Note.configuration) { store, _ throws in
            try await store.write { db in
                for (index, id) in Self.ids.enumerated() {
                    try db.frameworks.insert(Fixtures.framework(id))
                    try db.orders.insert(Fixtures.order(id, prices: Array(repeating: "1.25", count: index % 3 + 1)))
                    try db.records(Note.self).insert(
                        Note(id: id, text: "note \(index)", pinned: index.isMultiple(of: 2), due: Fixtures.date("2026-11-24")))
                }
            }
            try await store.read { db in
                var frameworks: [Framework] = [], orders: [Order] = [], notes: [Note] = []
                try db.frameworks.fetchEach { frameworks.append($0) }
                try db.orders.fetchEach { orders.append($0) }
                try db.records(Note.self).fetchEach { notes.append($0) }
                #expect(frameworks == (try db.frameworks.fetchAll()))
                #expect(orders == (try db.orders.fetchAll()))
                #expect(notes == (try db.records(Note.self).fetchAll()))
                let byteOrder = Self.ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                #expect(frameworks.map(\.id) == byteOrder)
                #expect(orders.map(\.id) == byteOrder)
                #expect(orders.map(\.items.count) == byteOrder.map { Self.ids.firstIndex(of: $0)! % 3 + 1 })
                #expect(notes.map(\.id) == byteOrder)
            }
        }
    }

    @Test("events: fetchEach walks by date then id, and from/through keep those days, both included")
    func eventsByDateWithinBounds() async throws {
        try await withTemporaryStore { store, _ throws in
            let dates = ["2026-01-31", "2025-12-31", "2026-02-01", "2026-01-01", "2026-01-31", "2026-01-15"]
            try await store.write { db in
                for (index, date) in dates.enumerated() {
                    try db.events.insert(Event(id: "e\(dates.count - index)", title: "t", date: Fixtures.date(date), notes: nil))
                }
            }
            try await store.read { db in
                func walked(_ first: String?, _ last: String?) throws -> [String] {
                    var seen: [String] = []
                    try db.events.fetchEach(from: first.map(Fixtures.date), through: last.map(Fixtures.date)) {
                        seen.append("\($0.date) \($0.id)")
                    }
                    return seen
                }
                let all = try walked(nil, nil)
                #expect(all == (try db.events.fetchAll()).map { "\($0.date) \($0.id)" })
                #expect(
                    all == ["2025-12-31 e5", "2026-01-01 e3", "2026-01-15 e1", "2026-01-31 e2", "2026-01-31 e6", "2026-02-01 e4"])
                #expect(try walked("2026-01-01", "2026-01-31") == Array(all[1...4]))
                #expect(try walked("2026-01-31", "2026-01-31") == ["2026-01-31 e2", "2026-01-31 e6"])
                #expect(try walked("2026-01-16", nil) == Array(all[3...]))
                #expect(try walked(nil, "2026-01-01") == Array(all[..<2]))
                #expect(try walked("2026-02-02", nil) == [])
                #expect(try db.events.inMonth(Fixtures.month("2026-01")).map { "\($0.date) \($0.id)" } == Array(all[1...4]))
                #expect(try db.events.on(Fixtures.date("2026-01-31")).map(\.id) == ["e2", "e6"])
            }
        }
    }

    /// A reversed range returned nothing, as if there were no events: it throws, naming both days.
    @Test("events: from after through is an error naming both days, not an empty walk")
    func eventsWithReversedBounds() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.events.insert(Event(id: "e", title: "t", date: Fixtures.date("2026-01-15"), notes: nil))
            let error = await #expect(throws: StoreError.self) {
                try await store.read { db in
                    try db.events.fetchEach(from: Fixtures.date("2027-01-01"), through: Fixtures.date("2024-01-01")) { _ in
                        Issue.record("walked an event")
                    }
                }
            }
            #expect(
                error
                    == .invalidRecord(
                        kind: .event, key: "", field: "from, through",
                        reason: "2027-01-01 is after 2024-01-01: a range runs from a day through the same day or a later one"))
            #expect(String(describing: error).contains("2027-01-01 is after 2024-01-01"))
            // The same day at both ends, and either end alone, are ranges.
            let walked = try await store.read { db in
                var count = 0
                try db.events.fetchEach(from: Fixtures.date("2026-01-15"), through: Fixtures.date("2026-01-15")) { _ in
                    count += 1
                }
                return count
            }
            #expect(walked == 1)
        }
    }

    struct Stop: Error {}

    @Test("an error thrown by the body ends the walk there and is rethrown; the connection reads on")
    func theBodysErrorEndsTheWalk() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.write { db in
                for number in 0..<20 { try db.frameworks.insert(Fixtures.framework(String(format: "f%02d", number))) }
            }
            try await store.read { db in
                var seen = 0
                #expect(throws: Stop.self) {
                    try db.frameworks.fetchEach { _ in
                        seen += 1
                        if seen == 5 { throw Stop() }
                    }
                }
                #expect(seen == 5)
                // The statement was reset: a second walk starts from the first row.
                var first: String?
                try db.frameworks.fetchEach { if first == nil { first = $0.id } }
                #expect(first == "f00")
            }
        }
    }

    @Test(
        "JSONArrayWriter's pieces are JSONWriter's array, byte for byte",
        arguments: [true, false], [0, 1, 3])
    func arrayPiecesMatchTheWholeArray(pretty: Bool, count: Int) {
        let elements: [JSONValue] = (0..<count).map { index in
            .object([
                "id": .string("r\(index) \"quoted\" é\n"), "n": .number(String(index)),
                "list": .array(index == 1 ? [] : [.bool(true), .null, .object([:])]),
            ])
        }
        let writer = JSONWriter(pretty: pretty)
        var array = JSONArrayWriter(writer)
        let pieces = elements.map { array.element($0) }.joined() + array.end()
        #expect(pieces == writer.string(.array(elements)))
    }
}
