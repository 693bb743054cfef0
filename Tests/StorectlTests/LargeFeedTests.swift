import Foundation
import Testing

/// A feed holding one 50 MB JSON string (generated here, never committed): under the default
/// size cap (256 MiB) it syncs, in a reasonable time and without crashing; under `--max-bytes
/// 1MiB` it is refused with an error naming the limit, and the store is left as it was.
/// Heavy (10-20 s): runs when STORE_HEAVY_TESTS=1, as `.ci/run` does in a step of its own.
@Suite(
    "Large feed: a 50 MB string in a feed",
    .enabled(if: ProcessInfo.processInfo.environment["STORE_HEAVY_TESTS"] == "1", "set STORE_HEAVY_TESTS=1 to run")
)
struct LargeFeedTests {
    static let descriptionLength = 50_000_000

    /// `{"version":1,"frameworks":[{... "description":"aaaa...a"}]}` with 50,000,000 'a's.
    static func hugeFeed() -> Data {
        var data = Data(
            #"{"version":1,"frameworks":[{"id":"huge","name":"Huge","imageName":"huge","urlString":"https://example.com/huge","description":""#
                .utf8)
        data.append(Data(repeating: UInt8(ascii: "a"), count: descriptionLength))
        data.append(Data(#""}]}"#.utf8))
        return data
    }

    static let examplesFeed = URL(fileURLWithPath: #filePath) // Tests/StorectlTests/LargeFeedTests.swift
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/apple-frameworks.json").path

    @Test("with --max-bytes 1MiB: refused naming the limit, the store unchanged")
    func refusedOverTheLimit() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl.run(["sync", Self.examplesFeed, "--quiet"], timeout: 60))
        let before = expectSuccess(try await storectl.run(["export"], timeout: 60)).stdout
        let feed = try storectl.directory.write(Self.hugeFeed(), to: "huge.json")

        let result = try await storectl.run(["sync", feed, "--max-bytes", "1MiB"], timeout: 60)
        expectFailure(result, status: 1, mentioning: [feed, "1048576", "--max-bytes"])

        #expect(sameBytes(expectSuccess(try await storectl.run(["export"], timeout: 60)).stdout, before), "the store changed")
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM frameworks WHERE id = 'huge'") == "0")
    }

    @Test("under the default limit: synced whole, within the time limit")
    func syncedUnderTheDefaultLimit() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl.run(["sync", Self.examplesFeed, "--quiet"], timeout: 60))
        let feed = try storectl.directory.write(Self.hugeFeed(), to: "huge.json")

        // About 10 s in a debug build on 2 busy cores; the time limit leaves room for a slower
        // machine, but a sync that goes quadratic in the string's length would never make it.
        let start = Date()
        let result = try await storectl.run(["sync", feed, "--json"], timeout: 180)
        let elapsed = Date().timeIntervalSince(start)
        expectSuccess(result)
        #expect(!result.timedOut, "took over 180 s")
        guard result.succeeded else { return }
        let report = try JSON.object(result.stdout)
        #expect(JSON.integer((report["frameworks"] as? [String: Any])?["inserted"]) == 1)
        #expect(
            try await sqlite3(
                storectl.db,
                "SELECT length(description), substr(description, 1, 3), substr(description, -3) FROM frameworks WHERE id = 'huge'"
            )
                == "\(Self.descriptionLength)|aaa|aaa")
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM frameworks") == "17")
        #expect(try await sqlite3(storectl.db, "PRAGMA integrity_check") == "ok")
        print("LargeFeedTests: synced a 50 MB string in \(String(format: "%.1f", elapsed)) s")
    }
}
