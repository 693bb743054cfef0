import Foundation
import StoreTestSupport
import Testing

/// Two processes migrating one new file: the second waits for the first's write lock, and past
/// its busy timeout says what a write says, not SQLite's "database is locked".
@Suite("storectl: waiting for another process's migration")
struct MigrationLockTests {
    /// Holds the write lock on a new, empty file from another process, as a first storectl
    /// migrating it does: in WAL mode (`wal`), as once its journal mode is set, or before that.
    func holdLock(_ path: String, wal: Bool) async throws -> ScriptProcess {
        let holder = try await ScriptProcess.start(
            python: """
                import sqlite3, sys
                connection = sqlite3.connect(sys.argv[1], isolation_level=None)
                if sys.argv[2] == "wal":
                    connection.execute("PRAGMA journal_mode = WAL")
                connection.execute("BEGIN IMMEDIATE")
                print("locked", flush=True)
                sys.stdin.read()
                """, [path, wal ? "wal" : "rollback"])
        #expect(holder.firstLine == "locked")
        return holder
    }

    @Test(
        "migrating, or opening to write, a new file another process holds locked: the write lock's message",
        arguments: [true, false])
    func lockedNewFile(wal: Bool) async throws {
        let storectl = try Storectl()
        let holder = try await holdLock(storectl.db, wal: wal)
        let add = ["frameworks", "add", "--id", "a", "--name", "A", "--image-name", "a", "--url", "u", "--description", "d"]
        for command in [["migrate"], add] {
            let result = try await storectl.run(["--busy-timeout", "1"] + command)
            expectFailure(result, status: 1, mentioning: [storectl.db, "another process holds the write lock", "waited 1 s"])
            #expect(!result.stderr.contains("database is locked"), "\(result)")
            #expect(result.stderr.components(separatedBy: storectl.db).count == 2, "the path is named once: \(result)")
        }
        _ = await holder.finish()
        // Released: the same commands succeed.
        expectSuccess(try await storectl.run(["--busy-timeout", "1", "migrate"]))
        expectSuccess(try await storectl.run(["--busy-timeout", "1"] + add))
    }
}
