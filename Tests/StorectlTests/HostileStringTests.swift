import Foundation
import Testing

/// Strings that break naive SQL, printf, terminals or JSON go through unchanged, byte for byte.
@Suite("storectl with hostile strings")
struct HostileStringTests {
    static let strings: [String] = [
        "'); DROP TABLE frameworks; --",
        "\"; DELETE FROM frameworks WHERE \"\" = \"",
        "%s%n%x%d%@ {0} ${HOME} $(echo hi) `id`",
        "\u{200F}right-to-left mark\u{200F} \u{202E}override\u{202C}",
        "emoji 🚀👩‍👩‍👧‍👦🇯🇵 and a family",
        "first line\nsecond line\r\nthird\ttabbed",
        "quotes \" and backslashes \\ and \\n literal",
        "e\u{301} (decomposed) vs \u{E9} (precomposed)",
        "line separator \u{2028} paragraph \u{2029} bell \u{07} escape \u{1B}[31mred\u{1B}[0m",
        "   leading and trailing spaces   ",
        "中文 العربية עברית русский",
    ]

    @Test("every framework field round-trips exactly through add and show --json / list --json")
    func frameworkFields() async throws {
        let storectl = try Storectl()
        for (index, text) in Self.strings.enumerated() {
            expectSuccess(
                try await storectl(
                    "frameworks", "add", "--id", "h\(index)", "--name", text, "--image-name", text,
                    "--url", text, "--description", "description: " + text))
        }
        for (index, text) in Self.strings.enumerated() {
            let shown = try JSON.object(expectSuccess(try await storectl("frameworks", "show", "h\(index)", "--json")).stdout)
            #expect(sameBytes(shown["name"] as? String, text), "name #\(index)")
            #expect(sameBytes(shown["imageName"] as? String, text), "imageName #\(index)")
            #expect(sameBytes(shown["urlString"] as? String, text), "urlString #\(index)")
            #expect(sameBytes(shown["description"] as? String, "description: " + text), "description #\(index)")
        }
        let list = try JSON.array(expectSuccess(try await storectl("frameworks", "list", "--json")).stdout)
        #expect(list.count == Self.strings.count)
        for object in list {
            let index = try #require(Int((object["id"] as? String ?? "").dropFirst()))
            #expect(sameBytes(object["name"] as? String, Self.strings[index]))
        }
        // The bytes in the file are the UTF-8 given: compare hex through the sqlite3 CLI.
        for (index, text) in Self.strings.enumerated() {
            let hex = try await sqlite3(storectl.db, "SELECT hex(name) FROM frameworks WHERE id = 'h\(index)'")
            #expect(hex == text.utf8.map { String(format: "%02X", $0) }.joined(), "#\(index)")
        }
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM sqlite_master WHERE name = 'frameworks'") == "1")
        // The table output keeps one line per row, whatever the newlines inside.
        #expect(expectSuccess(try await storectl("frameworks", "list")).lines.count == Self.strings.count + 2)
    }

    @Test("hostile ids work as ids: add, show --json, delete", arguments: Array(HostileStringTests.strings.enumerated()))
    func hostileIDs(index: Int, id: String) async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", id, "--name", "N", "--image-name", "i", "--url", "u",
                "--description", id))
        let shown = try JSON.object(expectSuccess(try await storectl("frameworks", "show", id, "--json")).stdout)
        #expect(sameBytes(shown["id"] as? String, id))
        #expect(sameBytes(shown["description"] as? String, id))
        #expect(
            try await sqlite3(storectl.db, "SELECT hex(id) FROM frameworks")
                == id.utf8.map { String(format: "%02X", $0) }.joined())
        expectSuccess(try await storectl("frameworks", "delete", id))
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM frameworks") == "0")
        #expect(
            try await sqlite3(storectl.db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'frameworks'")
                == "1")
    }

    @Test("events and order items carry hostile text too")
    func eventsAndOrders() async throws {
        let storectl = try Storectl()
        for (index, text) in Self.strings.enumerated() {
            expectSuccess(
                try await storectl("events", "add", "--id", "e\(index)", "--title", text, "--date", "2026-06-08", "--notes", text)
            )
        }
        let events = try JSON.array(expectSuccess(try await storectl("events", "list", "--json", "--date", "2026-06-08")).stdout)
        #expect(events.count == Self.strings.count)
        for event in events {
            let index = try #require(Int((event["id"] as? String ?? "").dropFirst()))
            #expect(sameBytes(event["title"] as? String, Self.strings[index]))
            #expect(sameBytes(event["notes"] as? String, Self.strings[index]))
        }

        // In an --item, a backslash is written \\ and a colon \: (the hostile names hold both).
        let names = Self.strings + ["a: colon", #"C:\Temp\"#]
        let items = names.map {
            $0.replacingOccurrences(of: #"\"#, with: #"\\"#).replacingOccurrences(of: ":", with: #"\:"#) + ":1.00:1"
        }
        expectSuccess(try await storectl.run(["orders", "add", "--id", "o"] + items.flatMap { ["--item", $0] }))
        let order = try JSON.object(expectSuccess(try await storectl("orders", "show", "o", "--json")).stdout)
        let stored = (order["items"] as? [[String: Any]] ?? []).map { $0["itemName"] as? String }
        #expect(stored.count == names.count)
        for (name, got) in zip(names, stored) { #expect(sameBytes(got, name)) }

        // The export carries them unchanged as well.
        let feed = try JSON.object(expectSuccess(try await storectl("export")).stdout)
        let exported = (feed["events"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String }
        #expect(Set(exported.map { Array($0.utf8) }) == Set(Self.strings.map { Array($0.utf8) }))
    }
}
