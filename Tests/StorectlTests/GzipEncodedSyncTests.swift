import Foundation
import Testing

/// A server that sends gzip-encoded bodies with their encoded Content-Length (nginx's
/// `gzip_static`): the size limits hold for the decoded bytes, which are what sync reads.
@Suite(.timeLimit(.minutes(10)))
struct GzipEncodedSyncTests {
    @Test("a published folder served gzip-encoded syncs, though a small file's encoded length exceeds its size")
    func publishedFolderServedGzipped() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        let cli = try Storectl()
        expectSuccess(
            try await cli(
                "--db", "src.sqlite", "events", "add", "--id", "e1", "--title", "q8Zr3xKpL0vYw2Tn", "--date", "2026-01-01"))
        expectSuccess(try await cli("--db", "src.sqlite", "publish", server.root.appendingPathComponent("pub").path))
        let manifest = try PublishTests.manifest(server.root.appendingPathComponent("pub").path)
        let files = try #require((manifest["snapshot"] as? [String: Any])?["files"] as? [[String: Any]])
        // Each file is smaller than its gzip encoding (stored blocks): the Content-Length that
        // was compared with the manifest's exact size, and refused the file.
        #expect(files.allSatisfy { ($0["size"] as? Int ?? .max) < 1000 })

        let url = server.url("/gzip/pub/manifest.json").absoluteString
        expectSuccess(try await cli("--db", "client.sqlite", "sync", url, "--quiet"))
        let shown = try await cli("--db", "client.sqlite", "events", "show", "e1")
        #expect(shown.stdout.contains("q8Zr3xKpL0vYw2Tn"), "\(shown)")
        #expect(try await server.requests().contains { $0.path.hasPrefix("/gzip/pub/snapshot-") })
    }

    @Test("a published file that decodes past the manifest's size is refused as it arrives")
    func publishedFileDecodingPastItsSize() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        let cli = try Storectl()
        let folder = server.root.appendingPathComponent("pub").path
        expectSuccess(try await cli("--db", "src.sqlite", "events", "add", "--id", "e1", "--title", "T", "--date", "2026-01-01"))
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        let snapshot = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("snapshot-") })
        // The same name, 4 MiB of other bytes: the manifest still says the published size.
        try Data(repeating: 0x20, count: 4 << 20).write(to: URL(fileURLWithPath: folder + "/" + snapshot))

        let url = server.url("/gzip/pub/manifest.json").absoluteString
        expectFailure(
            try await cli("--db", "client.sqlite", "sync", url), status: 1,
            mentioning: [snapshot, "larger than the", "bytes the manifest says"])
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("client.sqlite")))
    }

    @Test("a gzip bomb (8 KiB on the wire, 64 MiB decoded) is refused at --max-bytes, the store unchanged")
    func gzipBombIsRefused() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        let cli = try Storectl()
        expectSuccess(try await cli("events", "add", "--id", "e1", "--title", "T", "--date", "2026-01-01"))

        let url = server.url("/gzip-bomb?bytes=\(64 << 20)").absoluteString
        expectFailure(
            try await cli("sync", url, "--max-bytes", "1MiB"), status: 1,
            mentioning: ["/gzip-bomb", "larger than the limit of 1048576 bytes"])
        let history = try await sqlite3(cli.db, "SELECT outcome FROM sync_history")
        #expect(history == "failed")
        // Besides that history row, nothing: the event is still the only record.
        #expect(try await sqlite3(cli.db, "SELECT count(*) FROM events") == "1")
    }
}
