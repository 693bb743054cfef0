import Foundation
import Testing

/// `storectl sync` refusing a published feed it cannot use, and saying exactly what it kept.
@Suite(.timeLimit(.minutes(10)))
struct PublishedSyncRefusalTests {
    @Test("a manifest read from stdin is refused: it has no folder (its files were looked for in /dev)")
    func manifestFromStdinIsRefused() async throws {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 3)
        let folder = cli.directory.file("pub")
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        let manifest = try Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.json"))

        let result = try await cli.run(["--db", "client.sqlite", "sync", "-"], stdin: manifest)
        expectFailure(result, status: 1, mentioning: ["/dev/stdin", "snapshot-", "has no folder", "by path"])
        #expect(!result.stderr.contains("/dev/snapshot-"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("client.sqlite")))
        // By path, the same manifest syncs.
        expectSuccess(try await cli("--db", "client.sqlite", "sync", folder + "/manifest.json", "--quiet"))
    }

    @Test("a stale manifest says what it kept: the records unchanged, the cursor marked suspect (and it is)")
    func staleManifestSaysWhatItKept() async throws {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 3)
        let folder = cli.directory.file("pub")
        let manifestURL = URL(fileURLWithPath: folder + "/manifest.json")
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        let old = try Data(contentsOf: manifestURL)
        expectSuccess(try await cli("--db", "src.sqlite", "frameworks", "update", "fw-000001", "--description", "new"))
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        expectSuccess(try await cli("--db", "client.sqlite", "sync", folder, "--quiet"))
        let exported = try await PublishTests.export(cli, "client.sqlite")
        let client = cli.directory.file("client.sqlite")
        #expect(try await sqlite3(client, "SELECT cursor_suspect FROM sync_sources") == "0")

        try old.write(to: manifestURL)
        let stale = try await cli("--db", "client.sqlite", "sync", folder)
        expectFailure(
            stale, status: 1,
            mentioning: [
                "its records are unchanged, but the source's cursor is marked suspect, so the next sync reads the snapshot",
                "behind this store's cursor", "the cursor is marked suspect",
            ])
        #expect(!stale.stderr.contains("the store is unchanged"), "\(stale)")
        #expect(try await PublishTests.export(cli, "client.sqlite") == exported)
        #expect(try await sqlite3(client, "SELECT cursor_suspect FROM sync_sources") == "1")
    }
}
