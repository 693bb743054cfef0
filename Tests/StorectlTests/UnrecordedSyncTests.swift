import Foundation
import Testing

/// A sync whose records and images committed, and whose last bookkeeping write then failed (a
/// full disk): exit 3 and a message saying what is applied, never "the store is unchanged".
@Suite("storectl sync: bookkeeping that cannot be written")
struct UnrecordedSyncTests {
    @Test("exit 3; stderr says the records and images downloaded are applied; --json carries `unrecorded`")
    func appliedButUnrecorded() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        // Another program's trigger stands in for the full disk: completing the history row fails.
        let trigger = try await ScriptProcess.start(
            python: """
                import sqlite3, sys
                connection = sqlite3.connect(sys.argv[1], isolation_level=None)
                connection.execute("CREATE TRIGGER no_room BEFORE UPDATE ON sync_history BEGIN SELECT RAISE(ABORT, 'no room (simulated)'); END")
                connection.close()
                print("created", flush=True)
                """, [storectl.db])
        #expect(trigger.firstLine == "created")
        _ = await trigger.finish()
        try FileManager.default.createDirectory(atPath: storectl.directory.file("feed/img"), withIntermediateDirectories: true)
        try storectl.directory.write(Data("A".utf8), to: "feed/img/a.png")
        let feed = try storectl.directory.write(
            Data(
                #"{"version": 1, "frameworks": [{"id": "f1", "name": "F", "imageName": "f", "urlString": "https://f", "description": "d"}], "images": [{"url": "img/a.png"}]}"#
                    .utf8), to: "feed/feed.json")
        let result = try await storectl.run(["sync", feed, "--json"])
        #expect(result.status == 3, "\(result)")
        #expect(
            result.stderr.contains("the records (and the images downloaded) are applied")
                && result.stderr.contains("no room (simulated)"),
            "\(result)")
        #expect(!result.stderr.contains("unchanged"), "\(result)")
        let report = try JSON.object(result.stdout)
        #expect(report["status"] as? String == "applied", "\(result)")
        #expect((report["unrecorded"] as? String)?.contains("no room") == true, "\(result)")
        #expect(expectSuccess(try await storectl("images", "get", "img/a.png")).stdout == "A")
        #expect(expectSuccess(try await storectl("frameworks", "list", "--json")).stdout.contains("\"f1\""))
    }
}
