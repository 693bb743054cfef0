import Foundation
import Store
import Testing

/// What a user meets first: help, the version, command names, aligned tables.
@Suite("storectl command-line shape")
struct CommandLineShapeTests {
    @Test("`sync --help` shows sync's own options")
    func syncHelp() async throws {
        let storectl = try Storectl()
        let help = expectSuccess(try await storectl("sync", "--help"))
        for option in ["--policy", "--dry-run", "--max-bytes", "--timeout", "<source>"] {
            #expect(help.stdout.contains(option), "\(help)")
        }
    }

    @Test("a feed file named `history` is synced, not taken for a subcommand; history is `storectl history`")
    func historyIsNotASyncSubcommand() async throws {
        let storectl = try Storectl()
        let feed = #"{"version": 1, "events": [{"id": "e1", "title": "T", "date": "2026-06-08"}]}"#
        _ = try storectl.directory.write(Data(feed.utf8), to: "history")
        let synced = expectSuccess(try await storectl("sync", "history", "--json"))
        #expect(try JSON.object(synced.stdout)["status"] as? String == "applied", "\(synced)")
        #expect(try JSON.array(expectSuccess(try await storectl("events", "list", "--json")).stdout).count == 1)

        let history = try JSON.array(expectSuccess(try await storectl("history", "--json")).stdout)
        #expect(history.count == 1)
        #expect((history.first?["source"] as? String)?.hasSuffix("/history") == true, "\(history)")
        let table = expectSuccess(try await storectl("history", "--limit", "5"))
        #expect(table.lines.count == 3, "\(table)")
    }

    @Test("no arguments: help on stderr, exit 64")
    func noArguments() async throws {
        let storectl = try Storectl()
        let result = try await storectl.run([])
        #expect(result.status == exitUsage, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.contains("USAGE:") && result.stderr.contains("SUBCOMMANDS:"), "\(result)")
    }

    static let commands: [[String]] = [
        [], ["migrate"], ["migrate", "status"], ["frameworks", "list"], ["frameworks", "show"], ["frameworks", "add"],
        ["frameworks", "update"], ["frameworks", "delete"], ["orders", "list"], ["orders", "show"], ["orders", "add"],
        ["orders", "update"], ["orders", "total"], ["orders", "delete"], ["events", "list"], ["events", "show"],
        ["events", "add"], ["events", "update"], ["events", "delete"], ["events", "dates"], ["events", "calendar"],
        ["images", "put"], ["images", "get"], ["images", "list"], ["images", "delete"], ["images", "prune"],
        ["images", "stats"], ["export"], ["sync"], ["history"], ["watch"],
        // Where sync's options and history used to be.
        ["sync", "run"], ["sync", "history"],
    ]

    @Test("help never states a default twice", arguments: CommandLineShapeTests.commands)
    func helpStatesDefaultsOnce(_ command: [String]) async throws {
        let storectl = try Storectl()
        let help = expectSuccess(try await storectl.run(command + ["--help"]))
        if command.count < 2 || command[0] != "sync" {
            #expect(help.stdout.contains((["USAGE: storectl"] + command).joined(separator: " ")), "\(help)")
        }
        // One entry per option or argument: its first line and the more indented lines after it.
        var entries: [String] = []
        for line in help.stdout.split(separator: "\n") {
            if line.hasPrefix("   "), !entries.isEmpty {
                entries[entries.count - 1] += " " + line.trimmingCharacters(in: .whitespaces)
            } else {
                entries.append(String(line))
            }
        }
        for entry in entries {
            let mentions = entry.components(separatedBy: "default").count - 1
            #expect(mentions <= 1, "\(entry)")
        }
    }

    @Test("--version is the library's version, the one the HTTP User-Agent carries")
    func version() async throws {
        let storectl = try Storectl()
        let result = expectSuccess(try await storectl("--version"))
        #expect(result.output == Store.version)
        #expect(Store.userAgent == "Store/\(Store.version)")
    }

    @Test("table columns align by display width: Korean, CJK and emoji take two columns, combining marks none")
    func wideCharacters() async throws {
        let storectl = try Storectl()
        // Every name is 6 columns wide on a terminal, so the next column starts at the same place.
        let names = ["abcdef", "한국어", "中文字", "🚀👩‍👩‍👧‍👦🇯🇵", "e\u{301}e\u{301}e\u{301}xyz", "ｆｕｌ", "ab한cd"]
        for (index, name) in names.enumerated() {
            expectSuccess(
                try await storectl(
                    "frameworks", "add", "--id", "f\(index)", "--name", name, "--image-name", "img",
                    "--url", "u", "--description", "d"))
        }
        let list = expectSuccess(try await storectl("frameworks", "list"))
        // Required: the lines are indexed below (an empty output would crash the test process).
        try #require(list.lines.count == names.count + 2, "\(list)")
        #expect(list.lines[0] == "ID  NAME    IMAGE NAME  URL")
        #expect(list.lines[1] == "--  ------  ----------  ---")
        for (index, name) in names.enumerated() {
            #expect(list.lines[index + 2] == "f\(index)  \(name)  img" + String(repeating: " ", count: 9) + "u", "\(list.stdout)")
        }
    }

    @Test("a long wide-character cell is cut by display width")
    func clippedByWidth() async throws {
        let storectl = try Storectl()
        let long = String(repeating: "한", count: 40) // 80 columns
        expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", "k", "--name", long, "--image-name", "i", "--url", "u", "--description", "d"))
        let list = expectSuccess(try await storectl("frameworks", "list"))
        // 48 columns at most: 23 syllables (46 columns) and the ellipsis.
        #expect(
            list.lines[2] == "k   " + String(repeating: "한", count: 23) + "…  i" + String(repeating: " ", count: 11) + "u",
            "\(list.stdout)")
    }

    @Test("a key is never cut: a long id in a list is whole, so it can be copied into show or delete")
    func keysAreWhole() async throws {
        let storectl = try Storectl()
        let id = "id-" + String(repeating: "x", count: 97) // 100 columns
        expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", id, "--name", String(repeating: "n", count: 60), "--image-name", "i", "--url", "u",
                "--description", "d"))
        expectSuccess(try await storectl("events", "add", "--id", id, "--title", "T", "--date", "2026-06-08"))
        expectSuccess(try await storectl("orders", "add", "--id", id, "--item", "A:1:1"))
        let url = "https://example.com/" + String(repeating: "p", count: 80)
        let image = try storectl.directory.write(Data([1]), to: "i.png")
        expectSuccess(try await storectl("images", "put", url, image))
        for (list, key) in [("frameworks", id), ("events", id), ("orders", id), ("images", url)] {
            let result = expectSuccess(try await storectl(list, "list"))
            #expect(result.lines.count == 3 && result.lines[2].contains(key), "\(result)")
        }
        // Other cells are still cut at 48 columns.
        #expect(try await storectl("frameworks", "list").lines[2].contains(String(repeating: "n", count: 47) + "…"))
        expectSuccess(try await storectl("frameworks", "delete", id))
    }
}
