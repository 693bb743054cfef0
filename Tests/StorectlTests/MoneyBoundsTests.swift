import Foundation
import Testing

/// Issue 12, item 1: amounts that do not fit are refused where they enter (the CLI, a feed) and a
/// stored amount that does not fit reads back as an error, never a crash.
@Suite("storectl orders: money bounds")
struct MoneyBoundsTests {
    @Test("orders add refuses a price, quantity, subtotal or total that does not fit, naming the --item")
    func addRefusesWhatDoesNotFit() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("orders", "add", "--id", "ok", "--item", "Milk:2.49:3:2"))
        let cases: [(item: [String], mentions: [String])] = [
            (["--item", "Milk:90000000000000000:3:2"], ["--item #1", "price", "10000000000.00"]),
            (["--item", "Milk:1e17:3"], ["--item #1", "price", "too large"]),
            (["--item", "Milk:1:3:99999999999999999999"], ["--item #1", "quantity", "1000000"]),
            (["--item", "Milk:1:3:1000001"], ["--item #1", "quantity", "1000000"]),
            (["--item", "Milk:10000000000:3:2"], ["--item #1", "subtotal", "10000000000.00"]),
            (["--item", "A:1:1", "--item", "B:9000000000:1", "--item", "C:1000000000:1"], ["total", "10000000000.00"]),
        ]
        for (item, mentions) in cases {
            let result = try await storectl.run(["orders", "add", "--id", "c5"] + item)
            expectFailure(result, status: exitUsage, mentioning: mentions)
        }
        let ids = try JSON.array(expectSuccess(try await storectl("orders", "list", "--json")).stdout).compactMap {
            $0["id"] as? String
        }
        #expect(ids == ["ok"])
        // The largest amounts that fit are accepted and total exactly.
        expectSuccess(try await storectl("orders", "add", "--id", "max", "--item", "A:9999999999.99:1", "--item", "B:0.01:1"))
        #expect(try await storectl("orders", "total", "max").stdout == "10000000000.00\n")
        expectSuccess(try await storectl("orders", "add", "--id", "qty", "--item", "A:0.01:1:1000000"))
        #expect(try await storectl("orders", "total", "qty").stdout == "10000.00\n")
    }

    @Test("a feed with an amount that does not fit is refused with its JSON path; the store is unchanged")
    func feedRefusesWhatDoesNotFit() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("orders", "add", "--id", "ok", "--item", "Milk:2.49:3:2"))
        // The records (a failed sync still records its history row: issue 12, item 13, not this one).
        let before = expectSuccess(try await storectl("export")).stdoutData
        let feeds: [(String, String)] = [
            (#"{"itemName": "Milk", "price": 90000000000000000, "aisle": 3, "quantity": 2}"#, "orders[0].items[0].price"),
            (#"{"itemName": "Milk", "price": 1e17, "aisle": 3}"#, "orders[0].items[0].price"),
            (#"{"itemName": "Milk", "price": 1, "aisle": 3, "quantity": 99999999999999999999}"#, "orders[0].items[0].quantity"),
            (#"{"itemName": "Milk", "price": 10000000000, "aisle": 3, "quantity": 2}"#, "orders[0].items[0]"),
            (
                #"{"itemName": "A", "price": 9000000000, "aisle": 3}, {"itemName": "B", "price": 1000000000.01, "aisle": 3}"#,
                "orders[0].items"
            ),
        ]
        for (index, (items, path)) in feeds.enumerated() {
            let feed = #"{"version": 1, "orders": [{"id": "c5", "placedAt": "2026-11-20T09:30:00Z", "items": [\#(items)]}]}"#
            let file = try storectl.directory.write(Data(feed.utf8), to: "feed-\(index).json")
            let result = try await storectl("sync", file)
            expectFailure(result, status: 1, mentioning: [path])
            #expect(expectSuccess(try await storectl("export")).stdoutData == before, "\(result)")
        }
    }

    @Test("a stored amount that does not fit reads back as an error naming the order, not a crash")
    func storedOverflowIsAnError() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("orders", "add", "--id", "c5", "--item", "Milk:2.49:3:2", "--item", "Eggs:1:1"))
        _ = try await sqlite3(storectl.db, "UPDATE order_items SET price_cents = 9000000000000000000 WHERE item_name = 'Milk'")
        for command in [
            ["orders", "list"], ["orders", "list", "--json"], ["orders", "show", "c5"], ["orders", "total", "c5"], ["export"],
        ] {
            let result = try await storectl.run(command)
            expectFailure(result, status: 1, mentioning: ["c5", "price"])
        }
        _ = try await sqlite3(storectl.db, "UPDATE order_items SET price_cents = 900000000000, quantity = 1")
        for command in [["orders", "list"], ["orders", "total", "c5"]] {
            let result = try await storectl.run(command)
            expectFailure(result, status: 1, mentioning: ["c5", "total"])
        }
    }
}
