import Foundation
import Testing

/// Issue 12, item 9: another application's SQLite file is refused, unchanged; a store carries
/// our application_id; a read-only command does not create a store that is not there.
@Suite("storectl and SQLite files that are not stores")
struct ForeignFileTests {
    /// `PRAGMA application_id` of every store: "STOR".
    static let applicationID = "1398034258"

    struct FileState: Equatable {
        var bytes: Data
        var companions: [Bool]
    }

    func state(_ path: String) throws -> FileState {
        FileState(
            bytes: try Data(contentsOf: URL(fileURLWithPath: path)),
            companions: ["-wal", "-shm", "-journal"].map { FileManager.default.fileExists(atPath: path + $0) })
    }

    static let commands: [[String]] = [
        ["frameworks", "list"],
        ["frameworks", "add", "--id", "a", "--name", "A", "--image-name", "a", "--url", "u", "--description", "d"],
        ["orders", "list", "--json"], ["migrate"], ["migrate", "--dry-run"], ["migrate", "status"], ["export"], ["history"],
        ["images", "list"],
    ]

    @Test("a file the sqlite3 CLI made, with its own frameworks table, is refused and left byte-identical")
    func foreignTablesRefused() async throws {
        let storectl = try Storectl()
        let other = storectl.directory.file("other.sqlite")
        _ = try await sqlite3(other, "CREATE TABLE frameworks (name TEXT); INSERT INTO frameworks VALUES ('mine')")
        // A Rails-style schema_migrations is not ours either.
        let rails = storectl.directory.file("rails.sqlite")
        _ = try await sqlite3(
            rails, "CREATE TABLE schema_migrations (version TEXT PRIMARY KEY); INSERT INTO schema_migrations VALUES ('1')")
        for path in [other, rails] {
            let before = try state(path)
            for command in Self.commands {
                let result = try await storectl.run(["--db", path] + command)
                expectFailure(result, status: 1, mentioning: [path, "not a store"])
                #expect(try state(path) == before, "\(command) changed \(path)")
            }
            #expect(try await sqlite3(path, "PRAGMA journal_mode") == "delete")
        }
        #expect(try await sqlite3(other, "SELECT name FROM frameworks") == "mine")
    }

    @Test("a short file that is not SQLite (1 byte: SQLite would take it for an empty database) is refused unchanged")
    func shortFileRefused() async throws {
        let storectl = try Storectl()
        for bytes in [[0x78], Array("my notes\n".utf8)] {
            let path = try storectl.directory.write(Data(bytes), to: "notes-\(bytes.count).txt")
            for command in [["frameworks", "list"], ["migrate"], ["orders", "add", "--id", "o", "--item", "A:1:1"]] {
                expectFailure(
                    try await storectl.run(["--db", path] + command), status: 1, mentioning: [path, "not a SQLite database"])
                #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data(bytes), "\(command) changed \(path)")
            }
        }
    }

    /// The refusal's connection was the database's last: its close checkpointed the other
    /// application's -wal into the file and deleted the -wal and -shm, while storectl said the
    /// file "was left unchanged". Through a symbolic link too: SQLite names the -wal after the
    /// file the link names, and the open looked for one beside the link, found none, and let the
    /// refusal's close do the same.
    @Test(
        "another application's WAL database, with the -wal its killed process left, is refused and keeps its -wal (also through a symbolic link)",
        arguments: [false, true])
    func foreignWALKept(throughLink: Bool) async throws {
        let storectl = try Storectl()
        let path = storectl.directory.file("app.sqlite")
        let writer = try await ScriptProcess.start(
            python: """
                import os, sqlite3, sys
                connection = sqlite3.connect(sys.argv[1], isolation_level=None)
                connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT)")
                connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                connection.execute("INSERT INTO contacts (name) VALUES ('Ada')")
                print("written", flush=True)
                os._exit(0)
                """, [path])
        #expect(writer.firstLine == "written")
        _ = await writer.finish()
        var opened = path
        if throughLink {
            opened = storectl.directory.file("link.sqlite")
            try FileManager.default.createSymbolicLink(atPath: opened, withDestinationPath: "app.sqlite")
        }
        let before = try state(path)
        #expect(before.companions == [true, true, false])
        let wal = try Data(contentsOf: URL(fileURLWithPath: path + "-wal"))
        for command in [["frameworks", "list"], ["migrate"], ["orders", "add", "--id", "o", "--item", "A:1:1"]] {
            expectFailure(try await storectl.run(["--db", opened] + command), status: 1, mentioning: [opened, "not a store"])
            #expect(try state(path) == before, "\(command) changed \(path)")
            #expect(
                (try? Data(contentsOf: URL(fileURLWithPath: path + "-wal"))) == wal, "\(command) changed the -wal")
        }
        #expect(try await sqlite3(path, "SELECT name FROM contacts") == "Ada")
    }

    @Test("a file with another application_id is refused, even without tables")
    func otherApplicationIDRefused() async throws {
        let storectl = try Storectl()
        let path = storectl.directory.file("app.sqlite")
        _ = try await sqlite3(path, "PRAGMA application_id = 42; CREATE TABLE t (x)")
        let empty = storectl.directory.file("app-empty.sqlite")
        _ = try await sqlite3(empty, "PRAGMA application_id = 42; VACUUM")
        for path in [path, empty] {
            let before = try state(path)
            for command in Self.commands {
                expectFailure(try await storectl.run(["--db", path] + command), status: 1, mentioning: [path, "application_id"])
                #expect(try state(path) == before, "\(command) changed \(path)")
            }
        }
    }

    @Test("a new store, a 0-byte file and a store of an earlier version get our application_id")
    func applicationIDSet() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        #expect(try await sqlite3(storectl.db, "PRAGMA application_id") == Self.applicationID)

        let empty = try storectl.directory.write(Data(), to: "empty.sqlite")
        expectSuccess(
            try await storectl(
                "--db", empty, "frameworks", "add", "--id", "a", "--name", "A", "--image-name", "a",
                "--url", "u", "--description", "d"))
        #expect(try await sqlite3(empty, "PRAGMA application_id") == Self.applicationID)

        // What an earlier version left: a migrated store with application_id 0.
        _ = try await sqlite3(empty, "PRAGMA application_id = 0")
        expectSuccess(try await storectl("--db", empty, "frameworks", "list"))
        #expect(try await sqlite3(empty, "PRAGMA application_id") == Self.applicationID)
        #expect(try await sqlite3(empty, "SELECT id FROM frameworks") == "a")
    }

    @Test("a read-only command on a store that does not exist says so and creates nothing")
    func missingStoreNotCreated() async throws {
        let storectl = try Storectl()
        let missing = storectl.directory.file("mistyped.sqlite")
        let readOnly: [[String]] = [
            ["frameworks", "list"], ["frameworks", "show", "a"], ["orders", "list"], ["orders", "show", "o"],
            ["orders", "total", "o"],
            ["events", "list"], ["events", "show", "e"], ["events", "dates", "--month", "2026-06"],
            ["events", "calendar", "2026-06"],
            ["images", "list"], ["images", "stats"], ["images", "get", "https://example.com/a.png"],
            ["migrate", "status"], ["migrate", "--dry-run"], ["export"], ["history"],
            ["sync", "--dry-run", try storectl.directory.write(Data(#"{"version": 1}"#.utf8), to: "feed.json")],
        ]
        // An empty file is no store yet: a read left it a 100 KB store, migrated in place.
        let empty = try storectl.directory.write(Data(), to: "empty.sqlite")
        for command in readOnly + [["publish", storectl.directory.file("published")], ["frameworks", "delete", "a"]] {
            expectFailure(
                try await storectl.run(["--db", missing] + command), status: 1, mentioning: [missing, "does not exist"])
            #expect(!FileManager.default.fileExists(atPath: missing), "\(command) created the store")
            // migrate status and --dry-run read an empty file as the new store it is (every
            // migration pending: MigrateTests), and leave it empty too (it got a header and WAL
            // mode, and the next read migrated it).
            if command.first == "migrate" {
                expectSuccess(try await storectl.run(["--db", empty] + command))
                #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty, "\(command) wrote the empty file")
                continue
            }
            expectFailure(
                try await storectl.run(["--db", empty] + command), status: 1, mentioning: [empty, "is an empty file"])
            #expect(try Data(contentsOf: URL(fileURLWithPath: empty)).isEmpty, "\(command) wrote the empty file")
            #expect(!FileManager.default.fileExists(atPath: empty + "-wal"))
        }
        // Writing commands create it.
        expectSuccess(try await storectl("--db", missing, "events", "add", "--id", "e", "--title", "t", "--date", "2026-06-08"))
        expectSuccess(try await storectl("--db", missing, "events", "list"))
    }
}
