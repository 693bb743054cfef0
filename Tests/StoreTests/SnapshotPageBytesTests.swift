import Foundation
import Testing

@testable import Store

/// Snapshot pages are cut by bytes as well as by records (`PublishOptions.snapshotPageBytes`),
/// so a store of large images publishes pages a client's cap on a file accepts. Here with a
/// bound of 150 KB and images of 60 KB (about 80 KB as base64): one image a page. The end-to-end
/// case at the default bound (three 20 MB images through storectl) is a heavy test.
@Suite("Publish: snapshot pages bounded by bytes")
struct SnapshotPageBytesTests {
    @Test("large images are paged by bytes, each page under the bound; the folder syncs back whole under a cap just above it")
    func largeImagesArePagedByBytes() async throws {
        try await withTemporaryStore { source, directory in
            for index in 0..<4 {
                _ = try await source.images.put(
                    "https://example.com/\(index).png", data: Data(repeating: UInt8(index + 1), count: 60_000),
                    contentType: "image/png")
            }
            var options = PublishOptions()
            options.snapshotPageBytes = 150_000
            let folder = directory.url.appendingPathComponent("published", isDirectory: true)
            _ = try await source.publish(to: folder, options: options)

            let manifestURL = folder.appendingPathComponent(PublishedManifest.fileName)
            let manifest = try PublishedManifest.parse(try Data(contentsOf: manifestURL), source: "manifest")
            let sizes = manifest.snapshotFiles.map(\.size)
            // Counted by records alone (10,000 a page) the four images shared one page of about 320 KB.
            #expect(sizes.filter { $0 > 50_000 }.count == 4, "one page per image: \(sizes)")
            #expect(sizes.allSatisfy { $0 <= 150_000 }, "\(sizes)")

            let replica = try await Store.open(at: directory.file("replica.sqlite"))
            var sync = SyncOptions()
            sync.maximumBytes = 160_000
            let report = try await replica.sync(from: try FeedSource(manifestURL.path), options: sync)
            #expect(report.images.stored == 4, "\(report)")
            let bytes = { (images: [CachedImage]) in Dictionary(uniqueKeysWithValues: images.map { ($0.url, $0.data) }) }
            #expect(
                bytes(try await replica.read { try $0.images.fetchAll() })
                    == bytes(try await source.read { try $0.images.fetchAll() }))
            await replica.close()
        }
    }
}
