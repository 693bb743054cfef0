import Foundation
import Testing

/// Text from a feed or an argument never reaches the terminal raw: in human-readable output
/// (tables, `show`, sync reports, history, errors) control characters (C0, DEL, C1) and bidi
/// controls are shown escaped, so a name cannot retitle or recolour the terminal, reverse what
/// follows or forge lines. `--json` keeps every string exact.
@Suite("storectl escapes control characters in human-readable output")
struct TerminalEscapingTests {
    /// Retitles the terminal (OSC 0 ... BEL), recolours it (CSI 31 m), reverses what follows
    /// (U+202E), forges a line (CR LF), plus a C1 CSI (U+009B), DEL, an isolate and a mark.
    static let hostile = "x\u{1B}]0;pwned\u{07}y \u{1B}[31mred\u{202E}rev\r\nforged: line\u{9B}2J\u{7F}\u{2066}iso\u{200F}\tz"
    /// How it must look on the terminal.
    static let escaped = #"x\u{1B}]0;pwned\u{07}y \u{1B}[31mred\u{202E}rev\r\nforged: line\u{9B}2J\u{7F}\u{2066}iso\u{200F}\tz"#

    /// True if `text` holds a control character or a bidi control other than the newlines that
    /// separate lines.
    static func hasRawControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            let value = scalar.value
            if value == 0x0A { return false }
            return value < 0x20 || (0x7F...0x9F).contains(value) || (0x202A...0x202E).contains(value)
                || (0x2066...0x2069).contains(value) || value == 0x200E || value == 0x200F || value == 0x061C
        }
    }

    /// No raw control on stdout or stderr, and the hostile string shown escaped (in a table,
    /// where a long cell is cut, its start).
    static func expectEscaped(_ result: StorectlResult, table: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            !hasRawControls(result.stdout), "raw control characters on stdout: \(result.stdout.debugDescription)",
            sourceLocation: sourceLocation)
        #expect(
            !hasRawControls(result.stderr), "raw control characters on stderr: \(result.stderr.debugDescription)",
            sourceLocation: sourceLocation)
        #expect(
            (result.stdout + result.stderr).contains(table ? String(escaped.prefix(40)) : escaped), "\(result)",
            sourceLocation: sourceLocation)
    }

    @Test("add, list, show and errors: hostile fields are escaped; --json is exact")
    func throughAdd() async throws {
        let storectl = try Storectl()
        let h = Self.hostile
        expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", "fw", "--name", h, "--image-name", "i", "--url", "u", "--description", h))
        expectSuccess(try await storectl("events", "add", "--id", "ev", "--title", h, "--date", "2026-06-08", "--notes", h))
        // Its colon written \: in an --item.
        let item = h.replacingOccurrences(of: ":", with: #"\:"#) + ":1.50:3:2"
        expectSuccess(try await storectl("orders", "add", "--id", "o", "--item", item))

        for arguments in [
            ["frameworks", "list"], ["frameworks", "show", "fw"], ["events", "list"], ["events", "show", "ev"],
            ["orders", "show", "o"],
        ] {
            Self.expectEscaped(
                expectSuccess(try await storectl.run(arguments)), table: arguments.contains("list") || arguments[0] == "orders")
        }
        // `show` prints exactly its own lines: nothing forged.
        #expect(expectSuccess(try await storectl("frameworks", "show", "fw")).lines.count == 5)
        #expect(expectSuccess(try await storectl("events", "show", "ev")).lines.count == 4)
        #expect(expectSuccess(try await storectl("orders", "show", "o")).lines.count == 5)

        // A hostile id is escaped in what the command prints, on success and in errors.
        let added = expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", h, "--name", "n", "--image-name", "i", "--url", "u", "--description", "d"))
        Self.expectEscaped(added)
        let duplicate = try await storectl(
            "frameworks", "add", "--id", h, "--name", "n", "--image-name", "i", "--url", "u", "--description", "d")
        expectFailure(duplicate, status: 1)
        Self.expectEscaped(duplicate)
        let missing = try await storectl("events", "show", h)
        expectFailure(missing, status: 1)
        Self.expectEscaped(missing)
        let deleted = expectSuccess(try await storectl("frameworks", "delete", h))
        Self.expectEscaped(deleted)

        // --json: the exact strings.
        let framework = try JSON.object(expectSuccess(try await storectl("frameworks", "show", "fw", "--json")).stdout)
        #expect(sameBytes(framework["name"] as? String, h))
        let events = try JSON.array(expectSuccess(try await storectl("events", "list", "--json")).stdout)
        #expect(sameBytes(events.first?["notes"] as? String, h))
        let order = try JSON.object(expectSuccess(try await storectl("orders", "show", "o", "--json")).stdout)
        #expect(sameBytes((order["items"] as? [[String: Any]])?.first?["itemName"] as? String, h))
    }

    @Test("usage errors quote a bad argument escaped, on one line")
    func usageErrors() async throws {
        let storectl = try Storectl()
        let bad = "2026-02-30\r\n\u{1B}[31mforged"
        let result = try await storectl("events", "add", "--id", "e", "--title", "t", "--date", bad)
        expectFailure(result, status: exitUsage, mentioning: ["--date", #"'2026-02-30\r\n\u{1B}[31mforged'"#])
        #expect(!Self.hasRawControls(result.stderr), "\(result)")
        let unknown = try await storectl("frameworks", "list", "--\u{1B}]0;pwned\u{07}")
        expectFailure(unknown, status: exitUsage, mentioning: [#"--\u{1B}]0;pwned\u{07}"#])
        #expect(!Self.hasRawControls(unknown.stderr), "\(unknown)")
    }

    @Test("a synced feed: tables, the sync report, history and validation errors are escaped")
    func throughSync() async throws {
        let storectl = try Storectl()
        let h = Self.hostile
        let feed: [String: Any] = [
            "version": 1,
            "frameworks": [["id": h, "name": h, "imageName": h, "urlString": h, "description": h]],
            "events": [["id": "ev", "title": h, "date": "2026-06-08", "notes": h]],
            "orders": [["id": "o", "placedAt": "2026-06-08T10:00:00Z", "items": [["itemName": h, "price": 1.5, "aisle": 1]]]],
        ]
        // The file's name is hostile too: it is the source the report and history name.
        let path = try storectl.directory.write(try JSONSerialization.data(withJSONObject: feed), to: "feed\(h).json")
        let synced = expectSuccess(try await storectl("sync", path))
        Self.expectEscaped(synced)

        for arguments in [
            ["frameworks", "list"], ["frameworks", "show", h], ["events", "list"], ["events", "calendar", "2026-06"],
            ["orders", "list"], ["orders", "show", "o"], ["history"],
        ] {
            let result = expectSuccess(try await storectl.run(arguments))
            #expect(!Self.hasRawControls(result.stdout + result.stderr), "\(result)")
        }
        let list = try JSON.array(expectSuccess(try await storectl("frameworks", "list", "--json")).stdout)
        #expect(sameBytes(list.first?["id"] as? String, h))
        #expect(sameBytes(list.first?["description"] as? String, h))

        // A refused feed: the validation error quotes the hostile value, escaped, one problem a line.
        let bad: [String: Any] = [
            "version": 1,
            "events": [["id": "e1", "title": "t", "date": "2026-02-30\(h)"], ["id": "e2", "title": "t", "date": h]],
        ]
        let badPath = try storectl.directory.write(try JSONSerialization.data(withJSONObject: bad), to: "bad.json")
        let refused = try await storectl("sync", badPath)
        expectFailure(refused, status: 1, mentioning: ["events[0].date", "events[1].date"])
        Self.expectEscaped(refused)
        let problemLines = refused.stderr.split(separator: "\n").filter { $0.contains("events[") }
        #expect(problemLines.count == 2, "\(refused.stderr)")

        // History: the failed sync's error and the sources (cut to the column), escaped; --json exact.
        let history = expectSuccess(try await storectl("history"))
        #expect(!Self.hasRawControls(history.stdout + history.stderr), "\(history)")
        #expect(history.lines.count == 4, "\(history)")
        let entries = try JSON.array(expectSuccess(try await storectl("history", "--json")).stdout)
        #expect(entries.contains { sameBytes($0["source"] as? String, path) })
    }
}
