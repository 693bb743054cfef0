import Foundation
import Testing

/// `orders update ID ...` and `events update ID ...`, like `frameworks update`: only the fields
/// given change; an unknown id is an error (1); no field at all is a usage error (64).
@Suite("storectl orders update and events update")
struct UpdateCommandTests {
    @Test("orders update: --placed-at changes the time, --item (repeatable) replaces the items")
    func ordersUpdate() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl(
                "orders", "add", "--id", "o1", "--placed-at", "2026-06-01T10:00:00Z",
                "--item", "Milk:2.49:3:2", "--item", "Bread:1.00:1"))

        let moved = expectSuccess(try await storectl("orders", "update", "o1", "--placed-at", "2026-06-02T11:30:00Z"))
        #expect(moved.output == "updated order o1, total 5.98")
        var order = try JSON.object(expectSuccess(try await storectl("orders", "show", "o1", "--json")).stdout)
        #expect(order["placedAt"] as? String == "2026-06-02T11:30:00Z")
        #expect((order["items"] as? [[String: Any]])?.count == 2)

        let replaced = expectSuccess(
            try await storectl("orders", "update", "o1", "--item", "Eggs:0.10:2:3", "--item", "Tea:0.20:4"))
        #expect(replaced.output == "updated order o1, total 0.50")
        order = try JSON.object(expectSuccess(try await storectl("orders", "show", "o1", "--json")).stdout)
        #expect(order["placedAt"] as? String == "2026-06-02T11:30:00Z")
        let items = try #require(order["items"] as? [[String: Any]])
        #expect(items.map { $0["itemName"] as? String } == ["Eggs", "Tea"])
        #expect(JSON.integer(items.first?["quantity"]) == 3)
        #expect(expectSuccess(try await storectl("orders", "total", "o1")).output == "0.50")
    }

    @Test("orders update: unknown id, no field, a bad item or time; the store is unchanged")
    func ordersUpdateErrors() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl("orders", "add", "--id", "o1", "--placed-at", "2026-06-01T10:00:00Z", "--item", "Milk:2.49:3"))
        let before = expectSuccess(try await storectl("orders", "show", "o1", "--json")).stdout

        expectFailure(try await storectl("orders", "update", "nope", "--item", "A:1:1"), status: 1, mentioning: ["'nope'"])
        expectFailure(
            try await storectl("orders", "update", "o1"), status: exitUsage, mentioning: ["nothing to update", "--item"])
        expectFailure(
            try await storectl("orders", "update", "o1", "--item", "A:1.234:1"), status: exitUsage,
            mentioning: ["--item", "1.234"])
        expectFailure(
            try await storectl("orders", "update", "o1", "--placed-at", "yesterday"), status: exitUsage,
            mentioning: ["--placed-at"])
        #expect(expectSuccess(try await storectl("orders", "show", "o1", "--json")).stdout == before)
    }

    @Test("events update: --title, --date and --notes change only what is given")
    func eventsUpdate() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl("events", "add", "--id", "e1", "--title", "Keynote", "--date", "2026-06-08", "--notes", "Hall A"))

        let moved = expectSuccess(try await storectl("events", "update", "e1", "--date", "2026-06-09"))
        #expect(moved.output == "updated event e1 on 2026-06-09")
        var event = try JSON.object(expectSuccess(try await storectl("events", "show", "e1", "--json")).stdout)
        #expect(event["title"] as? String == "Keynote")
        #expect(event["date"] as? String == "2026-06-09")
        #expect(event["notes"] as? String == "Hall A")

        expectSuccess(try await storectl("events", "update", "e1", "--title", "State of the Union", "--notes", "Hall B"))
        event = try JSON.object(expectSuccess(try await storectl("events", "show", "e1", "--json")).stdout)
        #expect(event["title"] as? String == "State of the Union")
        #expect(event["date"] as? String == "2026-06-09")
        #expect(event["notes"] as? String == "Hall B")
        #expect(
            try JSON.array(expectSuccess(try await storectl("events", "list", "--date", "2026-06-08", "--json")).stdout).isEmpty)
    }

    @Test("events update: unknown id, no field, a bad date; the store is unchanged")
    func eventsUpdateErrors() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("events", "add", "--id", "e1", "--title", "T", "--date", "2026-06-08"))
        let before = expectSuccess(try await storectl("events", "show", "e1", "--json")).stdout

        expectFailure(try await storectl("events", "update", "nope", "--title", "x"), status: 1, mentioning: ["'nope'"])
        expectFailure(
            try await storectl("events", "update", "e1"), status: exitUsage, mentioning: ["nothing to update", "--title"])
        expectFailure(
            try await storectl("events", "update", "e1", "--date", "2026-02-30"), status: exitUsage,
            mentioning: ["--date", "2026-02-30"])
        #expect(expectSuccess(try await storectl("events", "show", "e1", "--json")).stdout == before)
    }
}
