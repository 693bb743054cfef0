import Foundation
import Store
import Testing

/// `storectl sync` against a real HTTP server on 127.0.0.1: `--force`, a policy change that
/// implies it, and `--timeout` as a deadline.
@Suite(.timeLimit(.minutes(10)))
struct SyncOverHTTPTests {
    static let feed = #"""
        {"version": 1, "frameworks": [
          {"id": "arkit", "name": "ARKit", "imageName": "arkit", "urlString": "https://example.com/arkit", "description": "AR"}
        ]}
        """#

    @Test("sync URL, a local edit, then sync URL --policy prefer-remote restores the record")
    func anotherPolicyRestoresALocalEdit() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        try server.publish("feed.json", Self.feed)
        let url = server.url("/feed.json").absoluteString
        let cli = try Storectl()

        let first = try await cli.run(["sync", url])
        #expect(first.status == 0, "\(first)")
        #expect(try await cli.run(["frameworks", "update", "arkit", "--name", "Edited"]).status == 0)
        let same = try await cli.run(["sync", url])
        #expect(same.stdout.contains("up-to-date"), "\(same)")

        let preferRemote = try await cli.run(["sync", url, "--policy", "prefer-remote", "--json"])
        #expect(preferRemote.status == 0, "\(preferRemote)")
        #expect(
            preferRemote.stdout.contains(#""status": "applied""#) || preferRemote.stdout.contains(#""status":"applied""#),
            "\(preferRemote)")
        let shown = try await cli.run(["frameworks", "show", "arkit", "--json"])
        #expect(shown.stdout.contains(#""ARKit""#), "\(shown)")
        #expect(!shown.stdout.contains("Edited"), "\(shown)")
    }

    @Test("STORECTL_FEED_TOKEN is sent as a bearer token; set but empty, it is a usage error and nothing is fetched")
    func feedToken() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        try server.publish("feed.json", Self.feed)
        let url = server.url("/feed.json").absoluteString
        let cli = try Storectl()

        expectSuccess(try await cli.run(["sync", url, "--quiet"], environment: ["STORECTL_FEED_TOKEN": "s3cret"]))
        // A secret that did not load: it used to be sent as no token at all.
        let empty = try await cli.run(["sync", url, "--force"], environment: ["STORECTL_FEED_TOKEN": ""])
        expectFailure(empty, status: exitUsage, mentioning: ["STORECTL_FEED_TOKEN"])
        #expect(try await server.requests().map(\.authorization) == ["Bearer s3cret"])
        #expect(!empty.stdout.contains("s3cret") && !empty.stderr.contains("s3cret"))
    }

    @Test("sync URL --force fetches unconditionally and reconciles")
    func forceFetches() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        try server.publish("feed.json", Self.feed)
        let url = server.url("/feed.json").absoluteString
        let cli = try Storectl()

        #expect(try await cli.run(["sync", url]).status == 0)
        #expect(try await cli.run(["frameworks", "delete", "arkit"]).status == 0)
        let forced = try await cli.run(["sync", url, "--force"])
        #expect(forced.status == 0, "\(forced)")
        #expect(forced.stdout.contains("applied"), "\(forced)")
        #expect(try await cli.run(["frameworks", "show", "arkit"]).status == 0)
        let conditional = try await server.requests().filter { $0.path == "/feed.json" }.map(\.conditional)
        #expect(conditional == [false, false])
    }

    @Test("--timeout is a deadline: a stalled server fails near it, and the message says how many attempts")
    func timeoutIsADeadline() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        let url = server.url("/stall").absoluteString
        let cli = try Storectl()

        let started = ContinuousClock.now
        let result = try await cli.run(["sync", url, "--timeout", "2"], timeout: 280)
        let took = ContinuousClock.now - started
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("timed out after 2 s, 1 attempt"), "\(result)")
        // Before, four attempts of 2 s and their backoff took over 9.75 s: the server saw four
        // requests. Now no retry starts past the deadline. The time bound only shows the run did
        // not wait for the server's 600 s stall (killed at 280 s, it would fail here too); it is
        // wide because a loaded full suite took 43 s for this test (the bound was 30 s), and one
        // at load 67 took 179 s.
        #expect(try await server.requests().filter { $0.path == "/stall" }.count == 1)
        #expect(took < .seconds(240), "took \(took)")
    }

    @Test("a failed image names its url once")
    func failedImageNamesItsURLOnce() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        let image = server.url("/missing.png").absoluteString
        try server.publish("feed.json", #"{"version": 1, "images": [{"url": "\#(image)"}]}"#)
        let cli = try Storectl()

        let result = try await cli.run(["sync", server.url("/feed.json").absoluteString])
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("image \(image): HTTP 404"), "\(result)")
        #expect(result.stderr.components(separatedBy: image).count == 2, "\(result)")
    }
}
