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

/// From the review of incremental sync over time: a new generation carried no tombstones.
@Suite("A full sync from a published feed")
struct PublishedFullSyncTests {
    private static func framework(_ id: String, _ description: String = "v1") -> Framework {
        Framework(id: id, name: id.uppercased(), imageName: id, urlString: "https://\(id)", description: description)
    }

    @Test(
        "deletes what the source sent before and its snapshot no longer holds (a new generation), as the policy says",
        arguments: [SyncPolicy.keepExisting, .preferRemote, .threeWay])
    func newGenerationDeletes(policy: SyncPolicy) async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("public", isDirectory: true)
            let manifest = try FeedSource(folder.appendingPathComponent(PublishedManifest.fileName).path)
            for id in ["a", "b", "c", "d"] { try await source.frameworks.insert(Self.framework(id)) }
            _ = try await source.publish(to: folder)
            let client = try await Store.open(at: directory.file("client.sqlite"))
            var options = SyncOptions()
            options.policy = policy
            _ = try await client.sync(from: manifest, options: options)
            // A record of the client's own, never received from the source, and one it changed.
            try await client.frameworks.insert(Self.framework("local"))
            try await client.frameworks.update(Self.framework("d", "changed here"))

            _ = try await source.frameworks.delete("b")
            _ = try await source.frameworks.delete("d")
            // The folder deleted and published again: a new generation, no tombstones.
            try FileManager.default.removeItem(at: folder)
            let republished = try await source.publish(to: folder)
            #expect(republished.outcome == .snapshot)

            let report = try await client.sync(from: manifest, options: options)
            #expect(report.published?.fullSyncReason == "the feed was republished as another generation", "\(report)")
            let ids = try await client.frameworks.fetchAll().map(\.id)
            // b is gone under every policy; d, changed locally, goes only under prefer-remote.
            #expect(ids == (policy == .preferRemote ? ["a", "c", "local"] : ["a", "c", "d", "local"]), "\(policy): \(ids)")
            #expect(report.frameworks.deleted == (policy == .preferRemote ? 2 : 1), "\(report)")
            // And the next sync, incremental again, changes nothing.
            let next = try await client.sync(from: manifest, options: options)
            #expect(next.status == .upToDate)
            await client.close()
        }
    }
}

/// A snapshot carries every tombstone since its generation began; once they outweigh its records
/// (and `maximumTombstoneBytes`), the publish starts a new generation without them.
@Suite("Published tombstones: bounded")
struct PublishedTombstoneBoundTests {
    @Test("records that come and go: a new generation once the tombstones outgrow the records; clients end equal")
    func tombstonesStartANewGeneration() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("public", isDirectory: true)
            let manifestURL = folder.appendingPathComponent(PublishedManifest.fileName)
            let manifest = try FeedSource(manifestURL.path)
            var options = PublishOptions()
            options.compaction.snapshotRefreshRatio = 0
            options.compaction.maximumTombstoneBytes = 1
            for id in ["a", "b"] { try await source.frameworks.insert(Fixtures.framework(id)) }
            let first = try await source.publish(to: folder, options: options)
            let client = try await Store.open(at: directory.file("client.sqlite"))
            _ = try await client.sync(from: manifest)

            // Many keys added, published, then deleted: their tombstones outweigh a and b.
            let churn = (0..<200).map { Fixtures.framework("churn-\($0)") }
            try await source.frameworks.insert(churn)
            _ = try await source.publish(to: folder, options: options)
            _ = try await client.sync(from: manifest)
            #expect(try await client.frameworks.count() == 202)
            try await source.write { db in try db.execute("DELETE FROM frameworks WHERE id LIKE 'churn-%'") }
            let pruned = try await source.publish(to: folder, options: options)
            #expect(pruned.outcome == .snapshot)
            #expect(pruned.reason?.contains("tombstones") == true, "\(String(describing: pruned.reason))")
            #expect(pruned.generation != first.generation)
            let published = try PublishedManifest.parse(try Data(contentsOf: manifestURL), source: "manifest")
            let tombstonePage = try #require(published.snapshotFiles.last)
            #expect(tombstonePage.size < 200, "the new generation's snapshot carries no tombstones: \(tombstonePage.size) bytes")

            // The client that held the churn deletes it (received from this folder, not in the snapshot).
            let report = try await client.sync(from: manifest)
            #expect(report.published?.fullSyncReason != nil)
            #expect(try await client.frameworks.fetchAll().map(\.id) == ["a", "b"])
            await client.close()
        }
    }
}

/// From the review of the round's diff: what followed the refusal of an older manifest.
@Suite("After an older manifest")
struct AfterAnOlderManifestTests {
    private static func framework(_ id: String) -> Framework {
        Framework(id: id, name: id.uppercased(), imageName: id, urlString: "https://\(id)", description: "d")
    }

    @Test("a folder restored from a backup, then published on: the client reads the snapshot once the head passes its cursor")
    func restoredFolder() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("public", isDirectory: true)
            let backup = directory.url.appendingPathComponent("backup", isDirectory: true)
            let manifest = try FeedSource(folder.appendingPathComponent(PublishedManifest.fileName).path)
            let client = try await Store.open(at: directory.file("client.sqlite"))
            func publish(_ id: String) async throws {
                try await source.frameworks.insert(Self.framework(id))
                _ = try await source.publish(to: folder)
            }
            try await publish("a")
            try FileManager.default.copyItem(at: folder, to: backup)
            try await publish("b")
            try await publish("c")
            _ = try await client.sync(from: manifest)
            // The folder restored from the backup (head 1), then published on: e at head 2.
            try FileManager.default.removeItem(at: folder)
            try FileManager.default.copyItem(at: backup, to: folder)
            try await publish("e")
            await #expect(throws: (any Error).self) { _ = try await client.sync(from: manifest) }
            try await publish("f")
            try await publish("g")
            // Sequences 2 and 3 now name e and f, not b and c: it used to go on from 3 (g only).
            let report = try await client.sync(from: manifest)
            #expect(report.published?.fullSyncReason?.contains("older manifest was served") == true, "\(report)")
            #expect(try await client.frameworks.fetchAll().map(\.id) == ["a", "b", "c", "e", "f", "g"])
            // Back to incremental syncs.
            try await publish("h")
            #expect(try await client.sync(from: manifest).published?.fullSyncReason == nil)
            await client.close()
        }
    }

    @Test("another policy or another program's kinds do not turn an older manifest into a full sync; only force does")
    func noImplicitFullSync() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("public", isDirectory: true)
            let manifestPath = folder.appendingPathComponent(PublishedManifest.fileName).path
            let manifest = try FeedSource(manifestPath)
            try await source.frameworks.insert(Self.framework("a"))
            try await source.frameworks.insert(Self.framework("b"))
            _ = try await source.publish(to: folder)
            let old = try Data(contentsOf: URL(fileURLWithPath: manifestPath))
            _ = try await source.frameworks.delete("b")
            _ = try await source.publish(to: folder)
            let clientPath = directory.file("client.sqlite")
            let app = try await Store.open(at: clientPath, configuration: Note.configuration)
            _ = try await app.sync(from: manifest)
            await app.close()
            try old.write(to: URL(fileURLWithPath: manifestPath))
            let client = try await Store.open(at: clientPath)
            var options = SyncOptions()
            options.policy = .preferRemote
            await #expect(throws: (any Error).self) { _ = try await client.sync(from: manifest, options: options) }
            #expect(try await client.frameworks.fetchAll().map(\.id) == ["a"], "b came back")
            options.force = true
            _ = try await client.sync(from: manifest, options: options)
            #expect(try await client.frameworks.fetchAll().map(\.id) == ["a", "b"])
            await client.close()
        }
    }
}
