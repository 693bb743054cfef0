import Foundation
import Testing

@testable import Store

/// From the review of incremental sync over time: a CDN serving an older manifest.json.
@Suite("A manifest older than the store's cursor")
struct StaleManifestTests {
    @Test("is refused, naming it and the likely cause, with the store unchanged; --force reads its snapshot")
    func refused() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("public", isDirectory: true)
            let manifestPath = folder.appendingPathComponent(PublishedManifest.fileName).path
            let manifest = try FeedSource(manifestPath)
            try await source.frameworks.insert(
                Framework(id: "a", name: "A", imageName: "a", urlString: "https://a", description: "v1"))
            try await source.frameworks.insert(
                Framework(id: "b", name: "B", imageName: "b", urlString: "https://b", description: "v1"))
            _ = try await source.publish(to: folder)
            let old = try Data(contentsOf: URL(fileURLWithPath: manifestPath))
            try await source.frameworks.update(
                Framework(id: "a", name: "A", imageName: "a", urlString: "https://a", description: "v2"))
            _ = try await source.frameworks.delete("b")
            _ = try await source.publish(to: folder)

            let client = try await Store.open(at: directory.file("client.sqlite"))
            var options = SyncOptions()
            options.policy = .preferRemote
            _ = try await client.sync(from: manifest, options: options)
            let synced = try await client.exportFeed()
            // The folder's manifest replaced by the older one (its files are all still there).
            try old.write(to: URL(fileURLWithPath: manifestPath))
            await #expect {
                _ = try await client.sync(from: manifest, options: options)
            } throws: { error in
                let text = String(describing: error)
                return text.contains("manifest.json") && text.contains("behind this store's cursor") && text.contains("--force")
            }
            // It used to sync the old snapshot: b back, a at v1.
            #expect(try await client.exportFeed() == synced)
            options.force = true
            let forced = try await client.sync(from: manifest, options: options)
            #expect(forced.published?.fullSyncReason == "a full sync was asked for")
            #expect(try await client.frameworks.find("a")?.description == "v1")
            await client.close()
        }
    }
}
