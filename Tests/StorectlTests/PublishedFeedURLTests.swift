import Foundation
import Testing

/// How a published feed's file names resolve against the manifest's URL, as an object store or
/// CDN serves it.
@Suite(.timeLimit(.minutes(10)))
struct PublishedFeedURLTests {
    /// A store `src.sqlite` of one event, published into the server's `pub` folder; storectl
    /// and the folder's path.
    static func publishOneEvent(into server: RecordingServer) async throws -> (Storectl, String) {
        let cli = try Storectl()
        let folder = server.root.appendingPathComponent("pub").path
        expectSuccess(
            try await cli("--db", "src.sqlite", "events", "add", "--id", "e1", "--title", "T", "--date", "2026-01-01"))
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        return (cli, folder)
    }

    @Test("a signed manifest URL's query is not sent with the files it names (each object has its own signature)")
    func manifestQueryIsNotReusedForItsFiles() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        let (cli, _) = try await Self.publishOneEvent(into: server)

        // An S3 presigned URL signs the manifest alone: the same signature on a snapshot's path
        // is refused (403 SignatureDoesNotMatch), even when the object is public.
        let url = server.url("/pub/manifest.json?X-Amz-Expires=60&X-Amz-Signature=0f1e2d").absoluteString
        expectSuccess(try await cli("--db", "client.sqlite", "sync", url, "--quiet"))
        let paths = try await server.requests().map(\.path)
        let files = paths.filter { $0.hasPrefix("/pub/snapshot-") }
        #expect(!files.isEmpty, "\(paths)")
        #expect(files.allSatisfy { !$0.contains("?") && !$0.contains("Signature") }, "\(paths)")
    }

    @Test("a manifest served at its folder's URL (nginx's `index manifest.json`) names files inside that folder")
    func manifestAtAFolderURL() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        let (cli, folder) = try await Self.publishOneEvent(into: server)
        // http.server answers a folder's URL with its index.html, as nginx does with `index`.
        try FileManager.default.copyItem(atPath: folder + "/manifest.json", toPath: folder + "/index.html")

        // The files are in /pub/, not in the parent of /pub/ (they were looked for at /).
        expectSuccess(try await cli("--db", "client.sqlite", "sync", server.url("/pub/").absoluteString, "--quiet"))
        let paths = try await server.requests().map(\.path)
        #expect(paths.contains { $0.hasPrefix("/pub/snapshot-") }, "\(paths)")
        #expect(!paths.contains { $0.hasPrefix("/snapshot-") }, "\(paths)")
    }

    @Test("a published file gone from the server (retired by a publish meanwhile) fails as missing, whatever its 404 page's size")
    func retiredFileIsMissingNotTooLarge() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        let (cli, folder) = try await Self.publishOneEvent(into: server)
        // The tombstones' page (about 130 bytes) is smaller than the server's 404 page, which
        // the file's cap (its size + 1) refused as "larger than the 130 bytes the manifest says".
        let tombstones = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.contains("-deleted-") })
        try FileManager.default.removeItem(atPath: folder + "/" + tombstones)

        expectFailure(
            try await cli("--db", "client.sqlite", "sync", server.url("/pub/manifest.json").absoluteString), status: 1,
            mentioning: [tombstones, "missing (404)", "a publish retired the file during this sync, sync again"])
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("client.sqlite")))
    }

    @Test("a presigned manifest URL, signed again for each sync, is one source; its signature is in no output and no history")
    func signedURLIsOneSourceWithoutItsSignature() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        let (cli, folder) = try await Self.publishOneEvent(into: server)
        let signed = { (signature: String) in
            server.url("/pub/manifest.json?X-Amz-Date=2026&X-Amz-Signature=\(signature)").absoluteString
        }

        let snapshots = { try await server.requests().filter { $0.path.hasPrefix("/pub/snapshot-") }.count }
        let first = expectSuccess(try await cli("--db", "client.sqlite", "sync", signed("aaa111")))
        let snapshotsRead = try await snapshots()
        expectSuccess(
            try await cli("--db", "src.sqlite", "events", "add", "--id", "e2", "--title", "T", "--date", "2026-01-02"))
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        let second = expectSuccess(try await cli("--db", "client.sqlite", "sync", signed("bbb222")))
        // The second signing continues from the first's cursor: no snapshot read again.
        #expect(!second.stdout.contains("no cursor for this source yet"), "\(second)")
        #expect(try await snapshots() == snapshotsRead)
        // A failing sync (the object is gone) names the URL without its signature too.
        let failed = try await cli(
            "--db", "client.sqlite", "sync", server.url("/gone/manifest.json?X-Amz-Signature=ccc333").absoluteString)
        expectFailure(failed, status: 1, mentioning: ["/gone/manifest.json", "404"])

        let database = cli.directory.file("client.sqlite")
        let key = server.url("/pub/manifest.json").absoluteString
        #expect(try await sqlite3(database, "SELECT source FROM sync_sources") == key)
        let history = try await sqlite3(database, "SELECT source, report, error FROM sync_history")
        #expect(history.contains(key) && history.contains("404"), "\(history)")
        let sources = expectSuccess(try await cli("--db", "client.sqlite", "sources", "list"))
        let shown = expectSuccess(try await cli("--db", "client.sqlite", "history"))
        for (signature, result) in [("aaa111", first), ("bbb222", second), ("ccc333", failed)] {
            #expect(!result.stdout.contains(signature) && !result.stderr.contains(signature), "\(result)")
            #expect(!history.contains(signature), "\(history)")
            #expect(!sources.stdout.contains(signature) && !shown.stdout.contains(signature), "\(shown)")
        }
    }
}
