import Foundation
import Testing

@Suite("storectl orders")
struct OrdersTests {
    @Test("0.10 + 0.20 totals exactly 0.30")
    func exactTotal() async throws {
        let storectl = try Storectl()
        let added = expectSuccess(try await storectl("orders", "add", "--id", "o1", "--item", "A:0.10:1", "--item", "B:0.20:2"))
        #expect(added.output == "added order o1, total 0.30")
        let total = expectSuccess(try await storectl("orders", "total", "o1"))
        #expect(total.stdout == "0.30\n")
    }

    @Test("Milk:2.49:3:2 totals 4.98; quantity defaults to 1")
    func quantity() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("orders", "add", "--id", "milk", "--item", "Milk:2.49:3:2"))
        #expect(expectSuccess(try await storectl("orders", "total", "milk")).stdout == "4.98\n")

        let order = try JSON.object(expectSuccess(try await storectl("orders", "show", "milk", "--json")).stdout)
        let items = try #require(order["items"] as? [[String: Any]])
        try #require(items.count == 1)
        #expect(Set(items[0].keys) == ["itemName", "price", "aisle", "quantity"])
        #expect(items[0]["itemName"] as? String == "Milk")
        #expect(JSON.cents(items[0]["price"]) == 249)
        #expect(JSON.integer(items[0]["aisle"]) == 3)
        #expect(JSON.integer(items[0]["quantity"]) == 2)

        expectSuccess(try await storectl("orders", "add", "--id", "bread", "--item", "Bread:3:1"))
        let bread = try JSON.object(try await storectl("orders", "show", "bread", "--json").stdout)
        let breadItem = try #require((bread["items"] as? [[String: Any]])?.first)
        #expect(JSON.integer(breadItem["quantity"]) == 1)
        #expect(JSON.cents(breadItem["price"]) == 300)
    }

    @Test(#"item names may contain colons, written \:"#)
    func colonInName() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl(
                "orders", "add", "--id", "c",
                "--item", #"Ratio 1\:2:1.00:4"#, // name "Ratio 1:2", no quantity
                "--item", #"Tea\: Earl Grey:3.50:2:3"#)) // name "Tea: Earl Grey", quantity 3
        let order = try JSON.object(try await storectl("orders", "show", "c", "--json").stdout)
        let items = try #require(order["items"] as? [[String: Any]])
        try #require(items.count == 2)
        #expect(items[0]["itemName"] as? String == "Ratio 1:2")
        #expect(JSON.cents(items[0]["price"]) == 100)
        #expect(JSON.integer(items[0]["aisle"]) == 4)
        #expect(JSON.integer(items[0]["quantity"]) == 1)
        #expect(items[1]["itemName"] as? String == "Tea: Earl Grey")
        #expect(JSON.cents(items[1]["price"]) == 350)
        #expect(JSON.integer(items[1]["aisle"]) == 2)
        #expect(JSON.integer(items[1]["quantity"]) == 3)
        #expect(try await storectl("orders", "total", "c").stdout == "11.50\n")
    }

    @Test("list --json: feed-shaped orders with total, prices and totals as JSON numbers")
    func listJSON() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl("orders", "add", "--id", "o2", "--placed-at", "2026-11-20T09:30:00Z", "--item", "Milk:2.49:3:2"))
        expectSuccess(
            try await storectl(
                "orders", "add", "--id", "o1", "--placed-at", "2026-11-19T08:00:00Z",
                "--item", "A:0.10:1", "--item", "B:0.20:2"))
        let result = expectSuccess(try await storectl("orders", "list", "--json"))
        let orders = try JSON.array(result.stdout)
        try #require(orders.count == 2)
        #expect(orders.map { $0["id"] as? String } == ["o1", "o2"])
        for order in orders {
            #expect(Set(order.keys) == ["id", "placedAt", "items", "total"])
            #expect(JSON.isNumber(order["total"]), "total must be a JSON number")
            for item in order["items"] as? [[String: Any]] ?? [] {
                #expect(JSON.isNumber(item["price"]), "price must be a JSON number")
            }
        }
        #expect(JSON.cents(orders[0]["total"]) == 30)
        #expect(JSON.cents(orders[1]["total"]) == 498)
        #expect(orders[0]["placedAt"] as? String == "2026-11-19T08:00:00Z")
        let items = try #require(orders[0]["items"] as? [[String: Any]])
        #expect(items.map { JSON.cents($0["price"]) } == [10, 20])
        #expect(items.map { $0["itemName"] as? String } == ["A", "B"])
        // Exact decimals in the text itself (not 0.30000000000000004, not "0.30").
        #expect(result.stdout.contains("\"total\": 0.30"))
        #expect(result.stdout.contains("\"total\": 4.98"))
        #expect(result.stdout.contains("\"price\": 0.10"))

        let table = expectSuccess(try await storectl("orders", "list")).lines
        #expect(table.count == 4)
        #expect(table[2].hasPrefix("o1") && table[2].hasSuffix("0.30"))
        #expect(table[3].hasPrefix("o2") && table[3].hasSuffix("4.98"))
    }

    @Test("--placed-at round-trips through show --json (normalized to UTC)")
    func placedAt() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("orders", "add", "--id", "a", "--placed-at", "2026-11-20T09:30:00Z", "--item", "X:1:1"))
        expectSuccess(
            try await storectl("orders", "add", "--id", "b", "--placed-at", "2026-11-20T10:30:00.250+01:00", "--item", "X:1:1"))
        let a = try JSON.object(expectSuccess(try await storectl("orders", "show", "a", "--json")).stdout)
        #expect(a["placedAt"] as? String == "2026-11-20T09:30:00Z")
        #expect(Set(a.keys) == ["id", "placedAt", "items", "total"])
        let b = try JSON.object(expectSuccess(try await storectl("orders", "show", "b", "--json")).stdout)
        #expect(b["placedAt"] as? String == "2026-11-20T09:30:00.250Z")
    }

    @Test("without --placed-at the order is placed now")
    func placedNow() async throws {
        let storectl = try Storectl()
        let before = Date()
        expectSuccess(try await storectl("orders", "add", "--id", "now", "--item", "X:1:1"))
        let after = Date()
        let order = try JSON.object(try await storectl("orders", "show", "now", "--json").stdout)
        let text = try #require(order["placedAt"] as? String)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let plain = ISO8601DateFormatter()
        let placed = try #require(formatter.date(from: text) ?? plain.date(from: text), "\(text)")
        #expect(placed.timeIntervalSince(before) > -1 && after.timeIntervalSince(placed) > -1, "\(text)")
    }

    @Test(
        "bad items are usage errors naming the --item",
        arguments: [
            ("A:1.234:1", "price"),
            ("A:1.00:-1", "aisle"),
            ("A:1.00:1:0", "quantity"),
            ("A:1.00", "expected NAME:PRICE:AISLE[:QTY]"),
            ("A", "expected NAME:PRICE:AISLE[:QTY]"),
            (":1.00:1", "name"),
            ("A:abc:1", "price"),
            ("A:-1:1", "price"),
            ("A:1:x", "aisle"),
        ])
    func badItem(item: String, problem: String) async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate")) // the store exists: a read of a missing one is refused
        let result = try await storectl("orders", "add", "--id", "bad", "--item", "Good:1.00:1", "--item", item)
        expectFailure(result, status: exitUsage, mentioning: ["--item #2", "'\(item)'", problem])
        // Nothing was stored.
        expectFailure(try await storectl("orders", "show", "bad"), mentioning: ["'bad'"])
    }

    @Test(
        "an order needs an item; --placed-at must be RFC 3339",
        arguments: [
            ["orders", "add", "--id", "x"],
            ["orders", "add", "--id", "x", "--item", "A:1:1", "--placed-at", "yesterday"],
            ["orders", "add", "--id", "x", "--item", "A:1:1", "--placed-at", "2026-02-30T10:00:00Z"],
            ["orders", "add", "--id", "x", "--item", "A:1:1", "--placed-at", "2026-11-20 25:00"],
        ])
    func badOrder(arguments: [String]) async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate")) // the store exists: a read of a missing one is refused
        let result = try await storectl.run(arguments)
        expectFailure(result, status: exitUsage, mentioning: [arguments.count > 4 ? "--placed-at" : "--item"])
        #expect(try JSON.array(try await storectl("orders", "list", "--json").stdout).isEmpty)
    }

    @Test("show, total and delete; missing ids fail naming the id; duplicates refused")
    func showDeleteMissing() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl(
                "orders", "add", "--id", "o1", "--placed-at", "2026-11-20T09:30:00Z",
                "--item", "Milk:2.49:3:2", "--item", "Bread:1.50:1"))
        let text = expectSuccess(try await storectl("orders", "show", "o1")).stdout
        #expect(text.contains("order o1, placed at 2026-11-20T09:30:00Z"))
        #expect(text.contains("Milk") && text.contains("Bread") && text.contains("total: 6.48"))

        expectFailure(
            try await storectl("orders", "add", "--id", "o1", "--item", "X:1:1"), mentioning: ["'o1'", "already exists"])
        #expect(try await storectl("orders", "total", "o1").stdout == "6.48\n")

        expectFailure(try await storectl("orders", "show", "zz1"), mentioning: ["'zz1'"])
        expectFailure(try await storectl("orders", "total", "zz2"), mentioning: ["'zz2'"])
        expectFailure(try await storectl("orders", "delete", "zz3"), mentioning: ["'zz3'"])

        #expect(expectSuccess(try await storectl("orders", "delete", "o1")).output == "deleted order o1")
        expectFailure(try await storectl("orders", "show", "o1"), mentioning: ["'o1'"])
        #expect(try JSON.array(try await storectl("orders", "list", "--json").stdout).isEmpty)
        // Its items went with it.
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM order_items") == "0")
    }
}
