import Foundation
import Testing

/// A sync from a published folder reads each file from disk: its size is checked before a byte
/// is read, `--max-bytes` holds for every file, and a file must lie in the manifest's folder.
@Suite(.timeLimit(.minutes(10)))
struct PublishedSyncLimitsTests {
    /// A source published into `pub` twice (a snapshot, then a segment), and the segment's path.
    private func published() async throws -> (Storectl, folder: String, segment: String) {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 20)
        let folder = cli.directory.file("pub")
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        expectSuccess(try await cli("--db", "src.sqlite", "frameworks", "update", "fw-000001", "--description", "new"))
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        let segment = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("segment-") })
        return (cli, folder, folder + "/" + segment)
    }

    @Test("a published file grown to 64 GiB is refused by its size, before it is read")
    func aHugeFileIsRefusedBySize() async throws {
        let (cli, folder, segment) = try await published()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: segment))
        // Sparse: no disk, but 64 GiB to read (the old loader read the file whole, then compared).
        try handle.truncate(atOffset: 64 << 30)
        try handle.close()
        let result = try await cli("--db", "client.sqlite", "sync", folder)
        expectFailure(result, status: 1, mentioning: [segment, "\(64 << 30) bytes, but the manifest says \(size)"])
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("client.sqlite")))
    }

    @Test("--max-bytes holds for each published file of a local folder (its size in the manifest is checked)")
    func maxBytesHoldsForLocalFiles() async throws {
        let (cli, folder, _) = try await published()
        // Room for the manifest, not for the snapshot's page of 20 frameworks.
        let manifest = try #require(try FileManager.default.attributesOfItem(atPath: folder + "/manifest.json")[.size] as? Int)
        let limit = manifest + 64
        expectFailure(
            try await cli("--db", "client.sqlite", "sync", folder, "--max-bytes", "\(limit)"), status: 1,
            // Said as a limit of this sync's (it read "is out of range 0...N", as if the manifest
            // were broken), with the option that sets it.
            mentioning: ["snapshot.files[0].size", "larger than the limit of \(limit) bytes per file", "--max-bytes"])
        expectFailure(
            try await cli("--db", "client.sqlite", "sync", folder, "--max-bytes", "0"), status: exitUsage,
            mentioning: ["--max-bytes"])
        expectSuccess(try await cli("--db", "client.sqlite", "sync", folder, "--quiet"))
    }

    @Test("a published file that is a link out of the folder is not read, whatever its digest")
    func aLinkOutOfTheFolderIsRefused() async throws {
        let (cli, folder, segment) = try await published()
        // The same bytes, moved out of the folder and linked back: size and SHA-256 still match.
        let outside = cli.directory.file("outside.json")
        try FileManager.default.moveItem(atPath: segment, toPath: outside)
        try FileManager.default.createSymbolicLink(atPath: segment, withDestinationPath: outside)
        expectFailure(try await cli("--db", "client.sqlite", "sync", folder), status: 1, mentioning: [segment, "outside"])
    }
}
