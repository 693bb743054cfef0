import Foundation
import Testing

/// `storectl sources`: the sync state kept per source key, and forgetting it. A feed synced from
/// a new temporary path each run used to leave one full copy of its records' hashes per run, with
/// no way to remove them.
@Suite("storectl sources")
struct SourcesTests {
    static let feed = Data(
        #"{"version": 1, "frameworks": [{"id": "a", "name": "A", "imageName": "a", "urlString": "https://a", "description": "d"}, {"id": "b", "name": "B", "imageName": "b", "urlString": "https://b", "description": "d"}]}"#
            .utf8)

    @Test("list shows each path synced from with its received records; forget removes one's state, keeps the records")
    func listAndForget() async throws {
        let storectl = try Storectl()
        let first = try storectl.directory.write(Self.feed, to: "run-1.json")
        let second = try storectl.directory.write(Self.feed, to: "run-2.json")
        expectSuccess(try await storectl("sync", first))
        expectSuccess(try await storectl("sync", second, "--policy", "three-way"))

        let listed = try JSON.array(expectSuccess(try await storectl("sources", "list", "--json")).stdout)
        #expect(listed.compactMap { $0["source"] as? String } == [first, second], "\(listed)")
        #expect(listed.compactMap { JSON.integer($0["receivedRecords"]) } == [2, 2], "\(listed)")
        #expect(listed.last?["policy"] as? String == "three-way")
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM sync_records") == "4")

        // By the path as given to sync, relative to the working folder.
        let forgot = expectSuccess(try await storectl("sources", "forget", "run-1.json"))
        #expect(forgot.stdout == "forgot \(first)\n", "\(forgot)")
        let after = try JSON.array(expectSuccess(try await storectl("sources", "list", "--json")).stdout)
        #expect(after.compactMap { $0["source"] as? String } == [second], "\(after)")
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM sync_records") == "2")
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM frameworks") == "2")
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM sync_history") == "2")

        // Again: nothing to forget, exit 1; the other source in the same command is forgotten.
        let again = try await storectl.run(["sources", "forget", first, second])
        #expect(again.status == 1, "\(again)")
        #expect(again.stderr.contains("no sync state for \(first)") && again.stdout.contains("forgot \(second)"), "\(again)")
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM sync_records") == "0")

        // The next sync from a forgotten source is a first sync: it works, and starts its state again.
        let report = try JSON.object(expectSuccess(try await storectl("sync", first, "--json")).stdout)
        #expect(report["status"] as? String == "applied", "\(report)")
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM sync_records") == "2")
    }
}
