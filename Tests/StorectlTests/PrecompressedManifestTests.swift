import Foundation
import Testing

/// A precompressed `manifest.json.gz` (or `.br`, `.zst`) an operator made once is served by
/// nginx's `gzip_static` in the manifest's place however old it is, and clients stay "up to
/// date" at its head for good: `storectl publish` warns when one is older than the manifest.
@Suite struct PrecompressedManifestTests {
    @Test("publish warns on stderr, naming each precompressed manifest older than manifest.json, and exits 0")
    func staleCopiesAreNamed() async throws {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 3)
        let folder = cli.directory.path + "/published"
        let first = try await cli.run(["--db", "src.sqlite", "publish", folder])
        #expect(first.status == 0 && first.stderr.isEmpty, "\(first)")

        // Copies made now are current: no warning while the manifest does not change.
        let manifest = folder + "/manifest.json"
        for suffix in ["gz", "br"] {
            try Data(contentsOf: URL(fileURLWithPath: manifest)).write(to: URL(fileURLWithPath: manifest + "." + suffix))
        }
        let unchanged = try await cli.run(["--db", "src.sqlite", "publish", folder])
        #expect(unchanged.status == 0 && unchanged.stderr.isEmpty, "\(unchanged)")

        // Made a minute ago, then a publish that changes the manifest: both named, exit 0.
        let past = Date().addingTimeInterval(-60)
        for suffix in ["gz", "br"] {
            try FileManager.default.setAttributes([.modificationDate: past], ofItemAtPath: manifest + "." + suffix)
        }
        let added = try await cli.run([
            "--db", "src.sqlite", "frameworks", "add", "--id", "new", "--name", "N", "--image-name", "n", "--url",
            "https://n", "--description", "d",
        ])
        #expect(added.status == 0, "\(added)")
        let second = try await cli.run(["--db", "src.sqlite", "publish", folder, "--json"])
        #expect(second.status == 0, "\(second)")
        #expect(PublishTests.json(second)["outcome"] as? String == "segment", "\(second.stdout)")
        for suffix in ["gz", "br"] {
            #expect(second.stderr.contains("\(manifest).\(suffix) is older than manifest.json"), "\(second.stderr)")
        }
        #expect(!second.stderr.contains(".zst"), "\(second.stderr)")
        // The publisher never deletes a file it did not write.
        #expect(FileManager.default.fileExists(atPath: manifest + ".gz"))
    }
}
