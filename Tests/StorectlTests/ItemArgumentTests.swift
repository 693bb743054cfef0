import Foundation
import Store
import Testing

/// `--item NAME:PRICE:AISLE[:QTY]` is split at unescaped colons, three or four fields, nothing
/// guessed: `Bolt M8:20:5.00:2` was silently the item `Bolt M8:20`, price 5.00, aisle 2.
@Suite(.timeLimit(.minutes(10)))
struct ItemArgumentTests {
    @Test func anEscapedColonOrBackslashInTheNameRoundTrips() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl(
                "orders", "add", "--id", "o", "--item", #"Bolt M8\:20:5.00:2"#, "--item", #"Back\\slash\\:1:3:4"#,
                "--item", #"\:\::0.10:0"#))
        let order = try JSON.object(try await storectl("orders", "show", "o", "--json").stdout)
        let items = try #require(order["items"] as? [[String: Any]])
        try #require(items.count == 3)
        #expect(items.map { $0["itemName"] as? String } == ["Bolt M8:20", #"Back\slash\"#, "::"])
        #expect(items.map { JSON.cents($0["price"]) } == [500, 100, 10])
        #expect(items.map { JSON.integer($0["aisle"]) } == [2, 3, 0])
        #expect(items.map { JSON.integer($0["quantity"]) } == [1, 4, 1])
        // The same text read back through update gives the same item.
        expectSuccess(try await storectl("orders", "update", "o", "--item", #"Bolt M8\:20:5.00:2"#))
        let updated = try JSON.object(try await storectl("orders", "show", "o", "--json").stdout)
        #expect((updated["items"] as? [[String: Any]])?.first?["itemName"] as? String == "Bolt M8:20")
    }

    @Test func anUnescapedColonMakesAnotherFieldAndIsNeverGuessedAround() async throws {
        let storectl = try Storectl()
        expectFailure(
            try await storectl("orders", "add", "--id", "o", "--item", "Milk:1:1", "--item", "Bolt M8:20:5.00:2"),
            status: exitUsage, mentioning: ["--item #2 'Bolt M8:20:5.00:2'", "aisle '5.00' is not an integer"])
        for (item, fields) in [("Bolt M8:20:5.00:2:1", 5), ("Milk:2.49", 2), ("Milk", 1), ("a:b:c:d:e:f", 6)] {
            expectFailure(
                try await storectl("orders", "add", "--id", "o", "--item", item), status: exitUsage,
                mentioning: ["--item #1 '\(item)'", "expected NAME:PRICE:AISLE[:QTY]", #"\:"#, "found \(fields) field"])
        }
        for item in [#"Milk\n:1:1"#, #"Milk:1:1\"#] {
            expectFailure(
                try await storectl("orders", "add", "--id", "o", "--item", item), status: exitUsage,
                mentioning: ["--item #1", "backslash"])
        }
        #expect(!FileManager.default.fileExists(atPath: storectl.db))
    }
}
