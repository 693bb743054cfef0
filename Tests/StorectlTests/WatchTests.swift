import Foundation
import Store
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `storectl watch [--kind K] [--json]`: a long-running process that prints one line per change
/// committed by other storectl processes on the same file, until SIGINT (exit 0).
@Suite("storectl watch", .timeLimit(.minutes(10)))
struct WatchTests {
    /// One change as `watch --json` prints it.
    struct Line: Equatable, Hashable, CustomStringConvertible {
        var kind: String
        var key: String
        var operation: String
        /// nil when the line has no "dates" member (every kind but events).
        var dates: [String]?

        init(_ kind: String, _ key: String, _ operation: String, dates: [String]? = nil) {
            (self.kind, self.key, self.operation, self.dates) = (kind, key, operation, dates)
        }

        init(json text: String) throws {
            let object = try JSON.object(text)
            guard let kind = JSON.string(object, "kind"), let key = JSON.string(object, "key"),
                let operation = JSON.string(object, "operation")
            else { throw JSON.NotJSON(text: text, reason: "kind, key and operation must be strings") }
            #expect(Set(object.keys).isSubset(of: ["kind", "key", "operation", "dates"]), "unexpected members: \(text)")
            var dates: [String]?
            if object["dates"] != nil {
                guard let list = object["dates"] as? [String] else {
                    throw JSON.NotJSON(text: text, reason: "dates must be strings")
                }
                dates = list
            }
            self.init(kind, key, operation, dates: dates)
        }

        var description: String { "\(operation) \(kind) \(key)\(dates.map { " \($0)" } ?? "")" }
    }

    // MARK: Commands run by "other processes"

    static func addFramework(_ id: String) -> [String] {
        [
            "frameworks", "add", "--id", id, "--name", "Name of \(id)", "--image-name", id,
            "--url", "https://example.com/\(id)", "--description", "About \(id).",
        ]
    }

    static func addEvent(_ id: String, on date: String) -> [String] {
        ["events", "add", "--id", id, "--title", "Event \(id)", "--date", date]
    }

    /// Writes a feed to the test's directory and returns its path.
    static func writeFeed(
        _ storectl: Storectl, _ name: String, events: [(id: String, date: String)],
        frameworks: [String] = [], deletedEvents: [String] = []
    ) throws -> String {
        var feed: [String: Any] = ["version": 1]
        feed["events"] = events.map { ["id": $0.id, "title": "Event \($0.id)", "date": $0.date] }
        feed["frameworks"] = frameworks.map { id in
            [
                "id": id, "name": "Name of \(id)", "imageName": id, "urlString": "https://example.com/\(id)",
                "description": "About \(id).",
            ]
        }
        if !deletedEvents.isEmpty { feed["deleted"] = ["events": deletedEvents] }
        return try storectl.directory.write(try JSONSerialization.data(withJSONObject: feed, options: [.sortedKeys]), to: name)
    }

    // MARK: Tests

    @Test("--json: one line per change, with kind, key, operation and event dates; SIGINT exits 0")
    func jsonLinesForEveryKindOfChange() async throws {
        let storectl = try Storectl()
        try expectSuccess(await storectl("migrate"))
        let watcher = try await Watcher(storectl, ["watch", "--json"])
        defer { watcher.kill() }
        #expect(await watcher.waitForStderr(containing: "watching"), "\(watcher.stderr)")

        expectSuccess(try await storectl.run(Self.addFramework("fw")))
        expectSuccess(try await storectl("frameworks", "update", "fw", "--name", "Renamed"))
        expectSuccess(try await storectl.run(Self.addEvent("ev", on: "2026-06-08")))
        expectSuccess(try await storectl("orders", "add", "--id", "o-1", "--item", "Milk:2.49:3"))
        // Rejected: nothing is committed, so nothing is printed.
        expectFailure(try await storectl.run(Self.addEvent("ev", on: "2026-06-10")))
        let feed = try Self.writeFeed(
            storectl, "feed.json",
            events: [("ev", "2026-06-09"), ("ev2", "2026-07-01"), ("ev3", "2026-07-02")])
        expectSuccess(try await storectl("sync", feed, "--policy", "prefer-remote", "--quiet"))
        expectSuccess(try await storectl("events", "delete", "ev"))
        expectSuccess(try await storectl("frameworks", "delete", "fw"))
        expectSuccess(try await storectl("orders", "delete", "o-1"))

        let lines = try await watcher.jsonLines(count: 10)
        #expect(
            Array(lines[0..<4]) == [
                Line("framework", "fw", "insert"),
                Line("framework", "fw", "update"),
                Line("event", "ev", "insert", dates: ["2026-06-08"]),
                Line("order", "o-1", "insert"),
            ])
        // The sync is one transaction: its three changes, the move with its old and new date.
        #expect(
            Set(lines[4..<7]) == [
                Line("event", "ev", "update", dates: ["2026-06-08", "2026-06-09"]),
                Line("event", "ev2", "insert", dates: ["2026-07-01"]),
                Line("event", "ev3", "insert", dates: ["2026-07-02"]),
            ])
        #expect(
            Array(lines[7...]) == [
                Line("event", "ev", "delete", dates: ["2026-06-09"]),
                Line("framework", "fw", "delete"),
                Line("order", "o-1", "delete"),
            ])

        let exit = try await watcher.interrupt()
        #expect(exit.status == 0, "\(exit)")
        // stderr holds only the line that says it is ready; stdout only JSON.
        #expect(exit.stderr.split(separator: "\n").count == 1 && exit.stderr.hasPrefix("watching "), "\(exit)")
        #expect(try watcher.jsonLinesNow().count == 10, "nothing printed after the last change: \(exit)")
    }

    @Test("raw SQL written through Store.write in another process is printed; a rolled-back one never")
    func rawSQLWritesOfAnotherProcessArePrinted() async throws {
        struct Rollback: Error {}
        let storectl = try Storectl()
        try expectSuccess(await storectl("migrate"))
        let watcher = try await Watcher(storectl, ["watch", "--json"])
        defer { watcher.kill() }
        #expect(await watcher.waitForStderr(containing: "watching"), "\(watcher.stderr)")
        let store = try await Store.open(at: storectl.db)
        let insert =
            "INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES (?, 'Raw', 'raw', 'https://example.com/raw', 'Raw SQL.')"
        do {
            _ = try await store.write { db in
                try db.execute(insert, ["thrown"]); throw Rollback()
            }
            Issue.record("the write did not throw")
        } catch is Rollback {}
        try await store.write { db in
            try db.execute("SAVEPOINT attempt")
            try db.execute(insert, ["undone"])
            try db.execute("ROLLBACK TO attempt")
            try db.execute("RELEASE attempt")
            try db.execute(insert, ["raw"])
            try db.execute("UPDATE events SET title = 'none matches' WHERE id = 'absent'")
        }
        await store.close()
        #expect(try await watcher.jsonLines(count: 1) == [Line("framework", "raw", "insert")])
        let exit = try await watcher.interrupt()
        #expect(exit.status == 0, "\(exit)")
        #expect(try watcher.jsonLinesNow() == [Line("framework", "raw", "insert")], "\(exit)")
    }

    @Test("without --json: 'watching ...' on stderr, then TIME OPERATION KIND KEY [DATES] lines")
    func textLines() async throws {
        let storectl = try Storectl()
        try expectSuccess(await storectl("migrate"))
        let watcher = try await Watcher(storectl, ["watch"])
        defer { watcher.kill() }
        let ready = await watcher.waitForStderr(containing: "watching")
        #expect(ready, "no 'watching' message: \(watcher.stderr)")
        #expect(watcher.stderr.contains(storectl.db), "\(watcher.stderr)")

        expectSuccess(try await storectl.run(Self.addFramework("fw")))
        expectSuccess(try await storectl.run(Self.addEvent("ev", on: "2026-06-08")))
        let feed = try Self.writeFeed(storectl, "feed.json", events: [("ev", "2026-06-09")])
        expectSuccess(try await storectl("sync", feed, "--policy", "prefer-remote", "--quiet"))

        let lines = try await watcher.lines(count: 3)
        let pattern = #/^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z) (.*)$/#
        var rest: [String] = []
        for line in lines {
            guard let match = line.wholeMatch(of: pattern) else {
                Issue.record("not TIME OPERATION KIND KEY [DATES]: \(line)")
                continue
            }
            rest.append(String(match.3))
        }
        #expect(rest == ["insert framework fw", "insert event ev 2026-06-08", "update event ev 2026-06-08,2026-06-09"])

        let exit = try await watcher.interrupt()
        #expect(exit.status == 0, "\(exit)")
        #expect(exit.stderr.trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("watching"), "\(exit)")
        #expect(!exit.stderr.lowercased().contains("error"), "\(exit)")
    }

    @Test("text lines show control characters in keys escaped, one line per change; --json keeps them exact")
    func hostileKeys() async throws {
        let storectl = try Storectl()
        try expectSuccess(await storectl("migrate"))
        let json = try await Watcher(storectl, ["watch", "--json"])
        defer { json.kill() }
        #expect(await json.waitForStderr(containing: "watching"), "\(json.stderr)")
        let text = try await Watcher(storectl, ["watch"])
        defer { text.kill() }
        let ready = await text.waitForStderr(containing: "watching")
        #expect(ready, "no 'watching' message: \(text.stderr)")

        let key = "k\u{1B}]0;pwned\u{07}\u{1B}[31m\r\nforged \u{202E}x"
        expectSuccess(try await storectl.run(Self.addFramework(key)))
        expectSuccess(try await storectl.run(Self.addFramework("after")))

        let lines = try await text.lines(count: 2)
        #expect(lines[0].hasSuffix(#" insert framework k\u{1B}]0;pwned\u{07}\u{1B}[31m\r\nforged \u{202E}x"#), "\(lines)")
        #expect(lines[1].hasSuffix(" insert framework after"), "\(lines)")
        #expect(try await json.jsonLines(count: 2) == [Line("framework", key, "insert"), Line("framework", "after", "insert")])
    }

    @Test("--kind event --json: only event changes, including those of a sync")
    func onlyTheKindAskedFor() async throws {
        let storectl = try Storectl()
        try expectSuccess(await storectl("migrate"))
        let watcher = try await Watcher(storectl, ["watch", "--kind", "event", "--json"])
        defer { watcher.kill() }
        #expect(await watcher.waitForStderr(containing: "watching"), "\(watcher.stderr)")

        expectSuccess(try await storectl.run(Self.addFramework("fw")))
        expectSuccess(try await storectl("orders", "add", "--id", "o-1", "--item", "Bread:1.00:1"))
        expectSuccess(try await storectl.run(Self.addEvent("ev", on: "2026-06-08")))
        let feed = try Self.writeFeed(
            storectl, "feed.json", events: [("from-feed", "2026-08-31")],
            frameworks: ["feed-fw"], deletedEvents: ["ev"])
        expectSuccess(try await storectl("sync", feed, "--policy", "prefer-remote", "--quiet"))
        expectSuccess(try await storectl("frameworks", "delete", "fw"))
        expectSuccess(try await storectl.run(Self.addEvent("last", on: "2026-09-01")))

        let lines = try await watcher.jsonLines(count: 4)
        #expect(lines[0] == Line("event", "ev", "insert", dates: ["2026-06-08"]))
        #expect(
            Set(lines[1...2]) == [
                Line("event", "from-feed", "insert", dates: ["2026-08-31"]),
                Line("event", "ev", "delete", dates: ["2026-06-08"]),
            ])
        #expect(lines[3] == Line("event", "last", "insert", dates: ["2026-09-01"]))

        let exit = try await watcher.interrupt()
        #expect(exit.status == 0, "\(exit)")
        // Everything committed before "last" was printed before it: no other kind slipped in.
        #expect(try watcher.jsonLinesNow().allSatisfy { $0.kind == "event" })
    }

    @Test("--kind with a built-in kind's plural (the command group's name) is a usage error that names the kind meant")
    func pluralKindIsRefused() async throws {
        let storectl = try Storectl()
        try expectSuccess(await storectl("migrate"))
        for (plural, kind) in [("frameworks", "framework"), ("orders", "order"), ("events", "event"), ("images", "image")] {
            // It used to watch an app kind of that name: nothing, for as long as it ran.
            expectFailure(
                try await storectl.run(["watch", "--kind", plural], timeout: 30), status: exitUsage,
                mentioning: ["--kind", "did you mean \(kind)?"])
        }
    }

    @Test("SIGTERM also ends it cleanly with status 0")
    func sigtermExitsZero() async throws {
        let storectl = try Storectl()
        try expectSuccess(await storectl("migrate")) // watch refuses a store that does not exist
        let watcher = try await Watcher(storectl, ["watch"])
        defer { watcher.kill() }
        #expect(await watcher.waitForStderr(containing: "watching"), "\(watcher.stderr)")
        let exit = try await watcher.signal(SIGTERM)
        #expect(exit.status == 0, "\(exit)")
        #expect(watcher.stdout.isEmpty, "\(exit)")
    }
}

// MARK: A running watcher

/// How a watcher ended.
struct WatcherExit: CustomStringConvertible {
    /// The exit status; 128 + the signal number if a signal killed it; -1 if it never exited.
    var status: Int32
    var stdout: String
    var stderr: String
    var description: String { "storectl watch -> \(status)\n--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)" }
}

struct WatcherTimeout: Error, CustomStringConvertible {
    var description: String
}

/// `storectl watch ...` running in the background (a `BackgroundProcess` of the one runner):
/// waits for its output are woken by the output itself. Killed when the test ends if it still
/// runs.
final class Watcher: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `taken` is used only by the test's own task; the process
    // is a Sendable `BackgroundProcess`, set in init.
    private let process: BackgroundProcess
    private let storectl: Storectl
    private var taken = 0

    init(_ storectl: Storectl, _ arguments: [String]) async throws {
        self.storectl = storectl
        process = try await storectl.start(arguments)
    }

    var stdout: String { process.stdout }
    var stderr: String { process.stderr }
    var exited: Int32? { process.exitStatus }

    /// The complete lines printed so far.
    var completeLines: [String] { process.completeLines }

    func waitForStderr(containing text: String, within seconds: Double = 240) async -> Bool {
        await process.wait(within: .seconds(seconds)) { $0.stderr.contains(text) }
    }

    /// Waits for `count` more lines than were taken before.
    func lines(count: Int, within seconds: Double = 240) async throws -> [String] {
        let needed = taken + count
        let ok = await process.wait(within: .seconds(seconds)) { $0.completeLines.count >= needed || $0.exitStatus != nil }
        let lines = completeLines
        guard ok, lines.count >= needed else {
            throw WatcherTimeout(
                description: "expected \(count) lines after \(taken) within \(seconds)s; "
                    + "stdout:\n\(stdout)\nstderr:\n\(stderr)\nexit: \(String(describing: exited))")
        }
        defer { taken += count }
        return Array(lines[taken..<needed])
    }

    /// The JSON lines printed so far.
    func jsonLinesNow() throws -> [WatchTests.Line] {
        try Self.jsonLines(completeLines)
    }

    private static func jsonLines(_ lines: [String]) throws -> [WatchTests.Line] {
        try lines.map(WatchTests.Line.init(json:))
    }

    /// Waits for `count` JSON lines after those already taken.
    func jsonLines(count: Int, within seconds: Double = 240) async throws -> [WatchTests.Line] {
        let needed = taken + count
        let ok = await process.wait(within: .seconds(seconds)) {
            ((try? Self.jsonLines($0.completeLines).count) ?? 0) >= needed || $0.exitStatus != nil
        }
        let lines = try jsonLinesNow()
        guard ok, lines.count >= needed else {
            throw WatcherTimeout(
                description: "expected \(count) JSON lines within \(seconds)s; "
                    + "stdout:\n\(stdout)\nstderr:\n\(stderr)\nexit: \(String(describing: exited))")
        }
        defer { taken += count }
        return Array(lines[taken..<needed])
    }

    /// Sends `signal` and waits for the exit.
    func signal(_ number: Int32) async throws -> WatcherExit {
        process.send(number)
        guard let status = await process.waitForExit(within: .seconds(240)) else {
            throw WatcherTimeout(
                description: "still running 240 s after signal \(number); stdout:\n\(stdout)\nstderr:\n\(stderr)")
        }
        return WatcherExit(status: status, stdout: stdout, stderr: stderr)
    }

    /// SIGINT, then waits for the exit.
    func interrupt() async throws -> WatcherExit {
        try await signal(SIGINT)
    }

    /// Kills it if it still runs.
    func kill() {
        process.send(SIGKILL)
    }
}
