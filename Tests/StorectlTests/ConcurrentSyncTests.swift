import Foundation
import Testing

/// Two `storectl sync` processes with different feeds into one file at the same time: SQLite's
/// locking and the busy timeout serialize their write transactions; both succeed and nothing of
/// either is lost.
@Suite("Concurrent syncs: two storectl processes syncing different feeds into one file")
struct ConcurrentSyncTests {
    static let frameworksPerFeed = 3_000
    static let eventsPerFeed = 60

    /// A feed of `frameworksPerFeed` frameworks and `eventsPerFeed` events whose ids all start
    /// with `prefix`, so two feeds with different prefixes share no key.
    static func feed(prefix: String) throws -> Data {
        let frameworks: [[String: Any]] = (0..<frameworksPerFeed).map { index in
            let id = "\(prefix)-fw-\(index)"
            return [
                "id": id, "name": "Framework \(index) of \(prefix)", "imageName": id,
                "urlString": "https://example.com/\(prefix)/\(index)",
                "description": String(repeating: "Feed \(prefix), framework \(index). ", count: 6),
            ]
        }
        let events: [[String: Any]] = (0..<eventsPerFeed).map { index in
            [
                "id": "\(prefix)-ev-\(index)", "title": "Event \(index) of \(prefix)",
                "date": String(format: "2026-06-%02d", index % 30 + 1), "notes": "from feed \(prefix)",
            ]
        }
        return try JSONSerialization.data(
            withJSONObject: ["version": 1, "frameworks": frameworks, "events": events],
            options: [.sortedKeys])
    }

    @Test("both exit 0 on a fresh file, every record of both feeds is there, integrity_check ok")
    func twoSyncsAtOnce() async throws {
        let storectl = try Storectl()
        let feedA = try storectl.directory.write(try Self.feed(prefix: "a"), to: "feed-a.json")
        let feedB = try storectl.directory.write(try Self.feed(prefix: "b"), to: "feed-b.json")

        // A fresh file: the two processes also race to create it and to migrate it. Both syncs
        // get a long time limit: the rest of the suite may be running alongside.
        async let runA = storectl.run(["sync", feedA, "--json"], timeout: 120)
        async let runB = storectl.run(["sync", feedB, "--json"], timeout: 120)
        let (resultA, resultB) = try await (runA, runB)

        for (result, feed) in [(resultA, feedA), (resultB, feedB)] {
            #expect(result.succeeded, "\(result)")
            #expect(!result.stderr.lowercased().contains("locked"), "\(result)")
            guard result.succeeded else { continue }
            let report = try JSON.object(result.stdout)
            #expect(JSON.string(report, "status") == "applied")
            #expect(JSON.string(report, "source") == feed)
            let frameworks = try #require(report["frameworks"] as? [String: Any])
            let events = try #require(report["events"] as? [String: Any])
            // Disjoint keys: each sync inserts all of its records, whatever the other did.
            #expect(JSON.integer(frameworks["inserted"]) == Self.frameworksPerFeed)
            #expect(JSON.integer(events["inserted"]) == Self.eventsPerFeed)
        }

        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM frameworks") == String(2 * Self.frameworksPerFeed))
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM events") == String(2 * Self.eventsPerFeed))
        #expect(try await sqlite3(storectl.db, "PRAGMA integrity_check") == "ok")

        let list = try JSON.array(expectSuccess(try await storectl.run(["frameworks", "list", "--json"], timeout: 60)).stdout)
        let expected = Set(["a", "b"].flatMap { prefix in (0..<Self.frameworksPerFeed).map { "\(prefix)-fw-\($0)" } })
        #expect(Set(list.compactMap { $0["id"] as? String }) == expected)
        // Records are whole: a sample compared field by field with its feed.
        for prefix in ["a", "b"] {
            for index in [0, 1, Self.frameworksPerFeed / 2, Self.frameworksPerFeed - 1] {
                let shown = try JSON.object(
                    expectSuccess(try await storectl("frameworks", "show", "\(prefix)-fw-\(index)", "--json")).stdout)
                #expect(JSON.string(shown, "name") == "Framework \(index) of \(prefix)")
                #expect(
                    sameBytes(
                        JSON.string(shown, "description"),
                        String(repeating: "Feed \(prefix), framework \(index). ", count: 6)))
            }
        }

        // Each process recorded its own sync, both applied; each migration was applied once.
        let history = try JSON.array(expectSuccess(try await storectl("history", "--json")).stdout)
        #expect(history.count == 2)
        #expect(Set(history.compactMap { JSON.string($0, "source") }) == [feedA, feedB])
        #expect(history.allSatisfy { JSON.string($0, "outcome") == "applied" })
        let statuses = try JSON.array(expectSuccess(try await storectl("migrate", "status", "--json")).stdout)
        #expect(!statuses.isEmpty && statuses.allSatisfy { $0["state"] as? String == "applied" })
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM schema_migrations") == String(statuses.count))
    }

    @Test("two syncs into an existing store that already holds records: both land, local records kept")
    func twoSyncsIntoAnExistingStore() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", "local", "--name", "Local", "--image-name", "local",
                "--url", "https://example.com/local", "--description", "Added by hand."))
        let feedA = try storectl.directory.write(try Self.feed(prefix: "a"), to: "feed-a.json")
        let feedB = try storectl.directory.write(try Self.feed(prefix: "b"), to: "feed-b.json")
        async let runA = storectl.run(["sync", feedA, "--quiet"], timeout: 120)
        async let runB = storectl.run(["sync", feedB, "--quiet"], timeout: 120)
        let (resultA, resultB) = try await (runA, runB)
        expectSuccess(resultA)
        expectSuccess(resultB)
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM frameworks") == String(2 * Self.frameworksPerFeed + 1))
        #expect(try await sqlite3(storectl.db, "SELECT description FROM frameworks WHERE id = 'local'") == "Added by hand.")
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM events") == String(2 * Self.eventsPerFeed))
        #expect(try await sqlite3(storectl.db, "PRAGMA integrity_check") == "ok")
    }
}
