import Foundation
import Testing

/// Out of file descriptors, storectl crashed (SIGILL, exit 132, in libdispatch's thread
/// cleanup) or a sync over http ended with no message. It now raises its soft limit to the
/// hard one, and refuses to start, clearly, below 32.
@Suite(.timeLimit(.minutes(10)))
struct DescriptorLimitTests {
    /// The hard limit of this process, which the shells of these tests inherit.
    static let hardLimit: UInt = {
        var limit = rlimit()
        #if canImport(Glibc)
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        #else
            getrlimit(RLIMIT_NOFILE, &limit)
        #endif
        return UInt(limit.rlim_max)
    }()

    /// Runs `storectl arguments...` after `limit` (`ulimit -n 8`) in /bin/sh; 99 if the shell
    /// could not set it.
    static func run(_ storectl: Storectl, limit: String, _ arguments: [String]) async throws -> StorectlResult {
        let script = "\(limit) || exit 99; exec \"$0\" \"$@\""
        let result = try await storectl.run(["-c", script, try Storectl.executableURL().path] + arguments, shell: true)
        #expect(result.status != 99, "the shell could not run \(limit): \(result)")
        return result
    }

    @Test(
        "with a hard limit under 32 (ulimit -n 6, 8, 31): 'too few file descriptors' and exit 1, no crash", arguments: [6, 8, 31])
    func tooFewRefused(limit: Int) async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("events", "add", "--id", "e1", "--title", "T", "--date", "2026-06-08"))
        let result = try await Self.run(storectl, limit: "ulimit -n \(limit)", ["events", "list"])
        expectFailure(
            result, status: 1,
            mentioning: ["storectl: too few file descriptors (ulimit -n \(limit)): at least 32 are needed"])
        #expect(result.stdout.isEmpty, "\(result)")
    }

    @Test("a sync under ulimit -n 14 is refused before it starts: exit 1, the message, no store created")
    func syncRefusedBeforeCreatingTheStore() async throws {
        let storectl = try Storectl()
        let feed = try storectl.directory.write(
            Data(#"{"version": 1, "frameworks": [], "orders": [], "events": []}"#.utf8), to: "feed.json")
        let result = try await Self.run(storectl, limit: "ulimit -n 14", ["sync", feed])
        expectFailure(result, status: 1, mentioning: ["too few file descriptors (ulimit -n 14)"])
        #expect(!FileManager.default.fileExists(atPath: storectl.db))
    }

    @Test(
        "with a low soft limit and a high hard one, the limit is raised and commands work (an http sync too)",
        .enabled(if: hardLimit >= 64, "needs a hard descriptor limit of at least 64"))
    func softLimitRaised() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("events", "add", "--id", "e1", "--title", "T", "--date", "2026-06-08"))
        let listed = expectSuccess(try await Self.run(storectl, limit: "ulimit -Sn 8", ["events", "list"]))
        #expect(listed.stdout.contains("e1"), "\(listed)")

        // What crashed with no message under `ulimit -n 14`.
        let server = try await RecordingServer.start()
        defer { server.stop() }
        try server.publish("feed.json", SpooledDownloadTests.page(0..<50, next: "feed-2.json"))
        try server.publish("feed-2.json", SpooledDownloadTests.page(50..<100, next: nil))
        let temporary = try storectl.directory.makeDirectory("tmp")
        let script = "ulimit -Sn 14 || exit 99; TMPDIR=\"$1\" exec \"$0\" sync \"$2\""
        let synced = try await storectl.run(
            ["-c", script, try Storectl.executableURL().path, temporary, server.url("/feed.json").absoluteString], shell: true)
        expectSuccess(synced)
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM frameworks") == "100")
    }
}
