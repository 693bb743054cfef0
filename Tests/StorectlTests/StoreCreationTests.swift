import Foundation
import Testing

/// Which commands create a store file named by --db or STORECTL_DB that does not exist: those
/// that add (sync, add, images put, migrate); the others refuse it, naming it, exit 1, and create
/// nothing. A command that creates the file and then fails removes it again.
@Suite("storectl: a missing store file is created only by commands that add")
struct StoreCreationTests {
    func leftovers(_ path: String) -> [String] {
        ["", "-wal", "-shm", "-journal"].map { path + $0 }.filter { FileManager.default.fileExists(atPath: $0) }
    }

    static let refusing: [[String]] = [
        ["frameworks", "update", "x", "--name", "N"], ["frameworks", "delete", "x"],
        ["orders", "update", "x", "--placed-at", "2026-06-01T10:00:00Z"], ["orders", "delete", "x"],
        ["events", "update", "x", "--title", "T"], ["events", "delete", "x"],
        ["images", "delete", "https://example.com/a.png"], ["images", "prune"], ["images", "get", "https://example.com/a.png"],
        ["watch"], ["export"], ["history"], ["migrate", "--dry-run"], ["migrate", "status"],
        ["frameworks", "list"], ["events", "calendar", "2026-06"],
    ]

    @Test(
        "commands that change or read existing records refuse a missing file and create nothing",
        arguments: StoreCreationTests.refusing)
    func refusesMissing(_ command: [String]) async throws {
        let storectl = try Storectl()
        let path = storectl.directory.file("missing.sqlite")
        let result = try await storectl.run(command + ["--db", path])
        expectFailure(result, status: 1, mentioning: [path, "does not exist"])
        #expect(leftovers(path).isEmpty, "\(leftovers(path))")
        // STORECTL_DB is a name too.
        expectFailure(try await storectl.run(command), status: 1, mentioning: [storectl.db, "does not exist"])
        #expect(leftovers(storectl.db).isEmpty)
    }

    @Test("a sync dry run refuses a missing file")
    func dryRunRefuses() async throws {
        let storectl = try Storectl()
        let feed = try storectl.directory.write(Data(#"{"version": 1}"#.utf8), to: "feed.json")
        expectFailure(try await storectl("sync", feed, "--dry-run"), status: 1, mentioning: [storectl.db, "does not exist"])
        #expect(leftovers(storectl.db).isEmpty)
    }

    @Test("add, images put, migrate and sync create the file")
    func creators() async throws {
        let storectl = try Storectl()
        let image = try storectl.directory.write(Data([1, 2, 3]), to: "a.png")
        let feed = try storectl.directory.write(
            Data(#"{"version": 1, "events": [{"id": "e1", "title": "T", "date": "2026-06-08"}]}"#.utf8), to: "feed.json")
        let commands: [[String]] = [
            ["frameworks", "add", "--id", "f", "--name", "F", "--image-name", "f", "--url", "u", "--description", "d"],
            ["orders", "add", "--id", "o", "--item", "Milk:1:1"],
            ["events", "add", "--id", "e", "--title", "T", "--date", "2026-06-08"],
            ["images", "put", "https://example.com/a.png", image],
            ["migrate"],
            ["sync", feed],
        ]
        for (index, command) in commands.enumerated() {
            let path = storectl.directory.file("new-\(index).sqlite")
            expectSuccess(try await storectl.run(command + ["--db", path]))
            #expect(leftovers(path) == [path], "\(command)")
        }
        let synced = storectl.directory.file("new-\(commands.count - 1).sqlite")
        #expect(try await sqlite3(synced, "SELECT id FROM events") == "e1")
    }

    @Test("a first sync that fails removes the file it created; --json still reports the failure")
    func failedFirstSyncLeavesNoFile() async throws {
        let storectl = try Storectl()
        let invalid = try storectl.directory.write(
            Data(#"{"version": 1, "events": [{"id": "e1", "title": "T", "date": "2026-02-30"}]}"#.utf8), to: "bad.json")
        for source in [storectl.directory.file("no-such-feed.json"), invalid] {
            let result = try await storectl.run(["sync", source, "--json"])
            #expect(result.status == 1, "\(result)")
            #expect(try JSON.object(result.stdout)["status"] as? String == "failed", "\(result)")
            #expect(result.stderr.contains("the store is unchanged"), "\(result)")
            #expect(leftovers(storectl.db).isEmpty, "\(leftovers(storectl.db))")
        }
        // A store that existed is kept, as it was.
        expectSuccess(try await storectl("events", "add", "--id", "kept", "--title", "T", "--date", "2026-06-08"))
        expectFailure(try await storectl("sync", invalid), status: 1, mentioning: ["2026-02-30"])
        #expect(try await sqlite3(storectl.db, "SELECT id FROM events") == "kept")
    }

    @Test("two commands creating one store at once, one failing: the other's confirmed write stays")
    func aFailedCreatorKeepsAnotherCommandsWrite() async throws {
        // The failing command removed the new file, the other's "added order same" with it (4
        // runs in 15 before).
        let storectl = try Storectl()
        for run in 0..<8 {
            let db = storectl.directory.file("race-\(run).sqlite")
            async let first = storectl("--db", db, "orders", "add", "--id", "same", "--item", "A:1:1")
            async let second = storectl("--db", db, "orders", "add", "--id", "same", "--item", "B:2:1")
            let results = try await [first, second]
            #expect(results.filter(\.succeeded).count == 1, "\(results)")
            #expect(try await sqlite3(db, "SELECT count(*) FROM orders") == "1", "run \(run)")
        }
    }

    /// The failed first sync removed whatever store was at the path if it held only bookkeeping:
    /// another fresh store renamed over it while the sync waited on its feed was deleted.
    @Test("a first sync that fails after another store was renamed over the new one leaves that store")
    func failedFirstSyncLeavesAStoreRenamedOverIt() async throws {
        let storectl = try Storectl()
        // As above: `exec 3> FIFO` returns once storectl has opened the FIFO (the store is open
        // by then). Another store is made and renamed over the new one, then the feed fails.
        let script = """
            mkfifo feed.fifo || exit 90
            "$0" --db new.sqlite sync feed.fifo > sync.out 2> sync.err &
            pid=$!
            exec 3> feed.fifo
            "$0" --db other.sqlite migrate > /dev/null || exit 91
            mv other.sqlite new.sqlite || exit 92
            printf 'not a feed' >&3
            exec 3>&-
            wait $pid
            echo "exit $?"
            """
        let result = try await storectl.run(["-c", script, try Storectl.executableURL().path], shell: true)
        #expect(result.output == "exit 1", "\(result)")
        let path = storectl.directory.file("new.sqlite")
        try #require(FileManager.default.fileExists(atPath: path), "the store renamed over the new one was removed")
        #expect(try await sqlite3(path, "PRAGMA integrity_check") == "ok")
        #expect(try await sqlite3(path, "SELECT count(*) > 0 FROM schema_migrations") == "1")
    }

    @Test("a first sync interrupted by SIGINT removes the file it created")
    func interruptedFirstSyncLeavesNoFile() async throws {
        let storectl = try Storectl()
        // The readiness handshake of SyncLifecycleTests: `exec 3> FIFO` returns once storectl
        // has opened the FIFO (the store is open by then), half a feed is written, the signal sent.
        let script = """
            mkfifo feed.fifo || exit 90
            \(Storectl.withInterruptEnabled) "$0" sync feed.fifo > sync.out 2> sync.err &
            pid=$!
            exec 3> feed.fifo
            printf '{"version": 1, "frameworks": [{"id": "new", "name": "N", ' >&3
            kill -INT $pid
            wait $pid
            echo "exit $?"
            """
        let result = try await storectl.run(["-c", script, try Storectl.executableURL().path], shell: true)
        #expect(result.output == "exit 130", "\(result)")
        let stderr = try String(contentsOfFile: storectl.directory.file("sync.err"), encoding: .utf8)
        #expect(stderr.contains("interrupted"), "\(stderr)")
        #expect(leftovers(storectl.db).isEmpty, "\(leftovers(storectl.db))")
    }
}
