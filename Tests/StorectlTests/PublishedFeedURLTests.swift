import Foundation
import Testing

/// How a published feed's file names resolve against the manifest's URL, as an object store or
/// CDN serves it.
@Suite(.timeLimit(.minutes(5)))
struct PublishedFeedURLTests {
    @Test("a signed manifest URL's query is not sent with the files it names (each object has its own signature)")
    func manifestQueryIsNotReusedForItsFiles() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        let cli = try Storectl()
        expectSuccess(
            try await cli("--db", "src.sqlite", "events", "add", "--id", "e1", "--title", "T", "--date", "2026-01-01"))
        expectSuccess(try await cli("--db", "src.sqlite", "publish", server.root.appendingPathComponent("pub").path))

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
        let cli = try Storectl()
        let folder = server.root.appendingPathComponent("pub").path
        expectSuccess(
            try await cli("--db", "src.sqlite", "events", "add", "--id", "e1", "--title", "T", "--date", "2026-01-01"))
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
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
        let cli = try Storectl()
        let folder = server.root.appendingPathComponent("pub").path
        expectSuccess(
            try await cli("--db", "src.sqlite", "events", "add", "--id", "e1", "--title", "T", "--date", "2026-01-01"))
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
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
}
