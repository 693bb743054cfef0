import Foundation
import Testing

/// Where the store lives: --db (before or after the subcommand), $STORECTL_DB, then
/// $XDG_DATA_HOME/storectl/store.sqlite, then ~/.local/share/storectl/store.sqlite; mode 0600.
@Suite("storectl store location and file mode")
struct DatabaseLocationTests {
    static let add = ["--id", "f1", "--name", "F", "--image-name", "f", "--url", "https://example.com", "--description", "d"]

    /// The ids `frameworks list --json` reports with these arguments and environment.
    func ids(_ storectl: Storectl, _ arguments: [String], environment: [String: String?] = [:]) async throws -> [String] {
        let result = expectSuccess(try await storectl.run(arguments, environment: environment))
        return try JSON.array(result.stdout).compactMap { $0["id"] as? String }
    }

    func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return try #require(attributes[.posixPermissions] as? NSNumber).intValue & 0o777
    }

    func xdgDefault(_ storectl: Storectl) -> String { storectl.dataHome + "/storectl/store.sqlite" }
    func homeDefault(_ storectl: Storectl) -> String { storectl.home + "/.local/share/storectl/store.sqlite" }

    /// Every command closes its store, so SQLite folds the WAL into the main file and deletes
    /// the -wal and -shm files: a copy of the main file alone holds everything written.
    @Test("a command leaves no -wal or -shm file, and a copy of the file alone has every write")
    func commandsCloseTheStore() async throws {
        let storectl = try Storectl()
        let path = storectl.db
        _ = expectSuccess(try await storectl.run(["frameworks", "add"] + Self.add))
        #expect(exists(path) && !exists(path + "-wal") && !exists(path + "-shm"))
        // A failing command closes it too.
        let failed = try await storectl.run(["sync", storectl.directory.file("missing.json")])
        #expect(failed.status == 1)
        #expect(!exists(path + "-wal") && !exists(path + "-shm"))

        let copy = storectl.directory.file("copy.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(try await ids(storectl, ["--db", copy, "frameworks", "list", "--json"]) == ["f1"])
    }

    @Test("--db before the subcommand")
    func dbBeforeSubcommand() async throws {
        let storectl = try Storectl()
        let path = storectl.directory.file("before.sqlite")
        let noEnv: [String: String?] = ["STORECTL_DB": nil]
        expectSuccess(try await storectl.run(["--db", path, "frameworks", "add"] + Self.add, environment: noEnv))
        #expect(exists(path))
        #expect(try await ids(storectl, ["--db", path, "frameworks", "list", "--json"], environment: noEnv) == ["f1"])
        // Same file, option after the subcommand.
        #expect(try await ids(storectl, ["frameworks", "list", "--json", "--db", path], environment: noEnv) == ["f1"])
        // Nothing went to the default locations.
        #expect(!exists(xdgDefault(storectl)) && !exists(homeDefault(storectl)) && !exists(storectl.db))
        #expect(try await ids(storectl, ["frameworks", "list", "--json"], environment: noEnv) == [])
    }

    @Test("--db after the subcommand, and --db=PATH")
    func dbAfterSubcommand() async throws {
        let storectl = try Storectl()
        let path = storectl.directory.file("after.sqlite")
        let noEnv: [String: String?] = ["STORECTL_DB": nil]
        expectSuccess(try await storectl.run(["frameworks", "add"] + Self.add + ["--db", path], environment: noEnv))
        #expect(exists(path))
        #expect(try await ids(storectl, ["frameworks", "list", "--json", "--db=\(path)"], environment: noEnv) == ["f1"])
        #expect(!exists(xdgDefault(storectl)) && !exists(homeDefault(storectl)))
    }

    @Test("--db wins over $STORECTL_DB")
    func dbOverridesEnvironment() async throws {
        let storectl = try Storectl()
        let path = storectl.directory.file("explicit.sqlite")
        expectSuccess(try await storectl.run(["frameworks", "add", "--db", path] + Self.add))
        #expect(exists(path))
        #expect(!exists(storectl.db), "STORECTL_DB's file must not be created when --db is given")
        expectFailure(try await storectl("frameworks", "list", "--json"), status: 1, mentioning: [storectl.db, "does not exist"])
        #expect(!exists(storectl.db), "a read does not create STORECTL_DB's file either")
        #expect(try await ids(storectl, ["frameworks", "list", "--json", "--db", path]) == ["f1"])
    }

    @Test("$STORECTL_DB names the file")
    func environmentVariable() async throws {
        let storectl = try Storectl()
        let path = storectl.directory.file("from-env.sqlite")
        expectSuccess(try await storectl.run(["frameworks", "add"] + Self.add, environment: ["STORECTL_DB": path]))
        #expect(exists(path))
        #expect(try await ids(storectl, ["frameworks", "list", "--json"], environment: ["STORECTL_DB": path]) == ["f1"])
        #expect(try await ids(storectl, ["frameworks", "list", "--json", "--db", path]) == ["f1"])
        #expect(!exists(xdgDefault(storectl)) && !exists(homeDefault(storectl)))
    }

    @Test("default: $XDG_DATA_HOME/storectl/store.sqlite, its folder created with mode 0700")
    func xdgDataHome() async throws {
        let storectl = try Storectl()
        let environment: [String: String?] = ["STORECTL_DB": nil]
        #expect(!exists(xdgDefault(storectl)))
        expectSuccess(try await storectl.run(["frameworks", "add"] + Self.add, environment: environment))
        #expect(exists(xdgDefault(storectl)))
        #expect(try mode(xdgDefault(storectl)) == 0o600)
        #expect(try mode(storectl.dataHome + "/storectl") == 0o700)
        #expect(!exists(homeDefault(storectl)))
        #expect(try await ids(storectl, ["frameworks", "list", "--json"], environment: environment) == ["f1"])
        #expect(try await ids(storectl, ["frameworks", "list", "--json", "--db", xdgDefault(storectl)]) == ["f1"])
        // An empty STORECTL_DB is a mistake, not the default store.
        expectFailure(
            try await storectl("frameworks", "list", "--json", environment: ["STORECTL_DB": ""]), status: exitUsage,
            mentioning: ["STORECTL_DB"])
    }

    @Test("default without XDG_DATA_HOME (unset or empty): ~/.local/share/storectl/store.sqlite")
    func homeLocalShare() async throws {
        let storectl = try Storectl()
        let unset: [String: String?] = ["STORECTL_DB": nil, "XDG_DATA_HOME": nil]
        expectSuccess(try await storectl.run(["frameworks", "add"] + Self.add, environment: unset))
        #expect(exists(homeDefault(storectl)))
        #expect(try mode(homeDefault(storectl)) == 0o600)
        #expect(!exists(xdgDefault(storectl)))
        #expect(try await ids(storectl, ["frameworks", "list", "--json"], environment: unset) == ["f1"])
        let empty: [String: String?] = ["STORECTL_DB": nil, "XDG_DATA_HOME": ""]
        #expect(try await ids(storectl, ["frameworks", "list", "--json"], environment: empty) == ["f1"])
        // A relative XDG_DATA_HOME is ignored, as the XDG specification asks: nothing is created
        // under the working folder.
        let relative: [String: String?] = ["STORECTL_DB": nil, "XDG_DATA_HOME": "relative-data"]
        #expect(try await ids(storectl, ["frameworks", "list", "--json"], environment: relative) == ["f1"])
        #expect(!exists(storectl.directory.file("relative-data")))
    }

    @Test(
        "an empty or relative HOME without XDG_DATA_HOME: a usage error, no store made anywhere",
        arguments: ["", "relative-home"])
    func unusableHome(_ home: String) async throws {
        let storectl = try Storectl()
        let environment: [String: String?] = ["STORECTL_DB": nil, "XDG_DATA_HOME": nil, "HOME": home]
        for arguments in [["frameworks", "list"], ["frameworks", "add"] + Self.add] {
            // HOME="" used to put the default store in /.local/share/storectl.
            expectFailure(
                try await storectl.run(arguments, environment: environment), status: exitUsage,
                mentioning: ["HOME", "--db"])
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: storectl.directory.path).allSatisfy { $0 != home })
        // --db still works without a usable HOME.
        expectSuccess(
            try await storectl.run(["frameworks", "add"] + Self.add + ["--db", "here.sqlite"], environment: environment))
    }

    @Test("the store file is created with mode 0600, even under umask 000", arguments: ["022", "000"])
    func fileMode(umask: String) async throws {
        let storectl = try Storectl()
        let path = storectl.directory.file("mode-\(umask).sqlite")
        let result = try await storectl.run(["frameworks", "add", "--db", path] + Self.add, umask: umask)
        expectSuccess(result)
        #expect(try mode(path) == 0o600)
        // SQLite gives its -wal and -shm files the database's permissions, if they are left behind.
        for suffix in ["-wal", "-shm"] where exists(path + suffix) {
            #expect(try mode(path + suffix) == 0o600, "\(suffix)")
        }
        // Commands that only read or migrate create it with the same mode.
        let other = storectl.directory.file("mode-\(umask)-migrate.sqlite")
        expectSuccess(try await storectl.run(["migrate", "--db", other], umask: umask))
        #expect(try mode(other) == 0o600)
    }

    @Test("a --db in a folder that does not exist fails with a message naming the path")
    func missingFolder() async throws {
        let storectl = try Storectl()
        let path = storectl.directory.file("no-such-folder/store.sqlite")
        expectFailure(try await storectl("frameworks", "list", "--db", path), mentioning: [path])
    }
}
