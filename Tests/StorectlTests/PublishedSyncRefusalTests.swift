import Foundation
import Testing

/// `storectl sync` refusing a published feed it cannot use, and saying exactly what it kept.
@Suite(.timeLimit(.minutes(5)))
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
}
