import Foundation
import Testing

@testable import Store

/// Images a feed names by URL (no data), downloaded after the commit: a failed one is tried again
/// by the next sync, from a manifest as from a version-1 feed, and one that was downloaded is
/// deleted by the source's tombstone.
@Suite("Sync: downloaded images, retried and deleted")
struct SyncImageRetryTests {
    static let imageURL = "https://img.example/pic.png"

    /// A transport serving the image (`bytes`) only once `available` says so (404 before).
    static func configuration(
        _ available: LockedBox<Bool>, downloads: LockedBox<Int>, bytes: LockedBox<Data> = LockedBox(Data([1, 2, 3]))
    ) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.transport = HTTPTransport { request in
            guard request.url.absoluteString == imageURL, available.withLock({ $0 }) else {
                return HTTPResponse(url: request.url, status: 404)
            }
            downloads.withLock { $0 += 1 }
            return HTTPResponse(
                url: request.url, status: 200, headers: ["Content-Type": "image/png"], body: bytes.withLock { $0 })
        }
        return configuration
    }

    /// A published folder (version 2) whose snapshot names the image by URL only.
    static func publishedFolder(in directory: TemporaryDirectory) throws -> String {
        let folder = directory.url.appendingPathComponent("pub", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let snapshot = Data(#"{"version": 1, "frameworks": [], "images": [{"url": "\#(imageURL)"}]}"#.utf8)
        let name = "snapshot-1-1-\(SHA256.hexDigest(of: snapshot).prefix(16)).json"
        try snapshot.write(to: folder.appendingPathComponent(name))
        let manifest = """
            {"version": 2, "generation": "g1", "head": 1,
             "snapshot": {"sequence": 1, "files": [{"name": "\(name)", "size": \(snapshot.count), "sha256": "\(SHA256.hexDigest(of: snapshot))"}]},
             "segments": []}
            """
        try Data(manifest.utf8).write(to: folder.appendingPathComponent("manifest.json"))
        return folder.appendingPathComponent("manifest.json").path
    }

    @Test func aFailedImageOfAManifestSyncIsTriedAgainByTheNextSync() async throws {
        try await withTemporaryDirectory { directory in
            let (available, downloads) = (LockedBox(false), LockedBox(0))
            let store = try await Store.open(
                at: directory.databasePath, configuration: Self.configuration(available, downloads: downloads))
            let source = try FeedSource(try Self.publishedFolder(in: directory))
            let first = try await store.sync(from: source)
            #expect(first.images.failed == 1)
            available.withLock { $0 = true }
            // The cursor went back: the snapshot is read again, and the image fetched.
            let second = try await store.sync(from: source)
            #expect(second.status == .applied, "not up-to-date: \(second.status)")
            #expect(second.images.downloaded == 1 && second.images.failed == 0)
            #expect(try await store.images.contains(Self.imageURL))
            // Now at the head, with every image: up to date.
            #expect(try await store.sync(from: source).status == .upToDate)
            #expect(downloads.withLock { $0 } == 1)
            await store.close()
        }
    }

    @Test(arguments: [SyncPolicy.keepExisting, .threeWay, .preferRemote])
    func aDownloadedImageIsDeletedByItsSourcesTombstone(policy: SyncPolicy) async throws {
        try await withTemporaryDirectory { directory in
            let (available, downloads) = (LockedBox(true), LockedBox(0))
            let store = try await Store.open(
                at: directory.databasePath, configuration: Self.configuration(available, downloads: downloads))
            let feed = directory.url.appendingPathComponent("feed.json")
            var options = SyncOptions()
            options.policy = policy
            try Data(#"{"version": 1, "images": [{"url": "\#(Self.imageURL)"}]}"#.utf8).write(to: feed)
            let first = try await store.sync(from: try FeedSource(feed.path), options: options)
            #expect(first.images.downloaded == 1)
            try Data(#"{"version": 1, "deleted": {"images": ["\#(Self.imageURL)"]}}"#.utf8).write(to: feed)
            let second = try await store.sync(from: try FeedSource(feed.path), options: options)
            #expect(second.images.deleted == 1, "\(policy)")
            #expect(try await store.images.contains(Self.imageURL) == false)
            await store.close()
        }
    }

    @Test func aFailedImageOfAForcedFullSyncIsTriedAgainFromTheSnapshot() async throws {
        try await withTemporaryDirectory { directory in
            let (available, downloads) = (LockedBox(true), LockedBox(0))
            let store = try await Store.open(
                at: directory.databasePath, configuration: Self.configuration(available, downloads: downloads))
            let source = try FeedSource(try Self.publishedFolder(in: directory))
            #expect(try await store.sync(from: source).images.downloaded == 1)
            _ = try await store.images.delete(Self.imageURL)
            available.withLock { $0 = false }
            var forced = SyncOptions()
            forced.force = true
            #expect(try await store.sync(from: source, options: forced).images.failed == 1)
            available.withLock { $0 = true }
            // The full sync left no cursor: the snapshot is read again, and the image fetched.
            let again = try await store.sync(from: source)
            #expect(again.status == .applied && again.images.downloaded == 1, "\(again.status)")
            await store.close()
        }
    }

    @Test func anImageFetchedAgainWithOtherBytesIsStillDeletedByTheTombstone() async throws {
        try await withTemporaryDirectory { directory in
            let (available, downloads, bytes) = (LockedBox(true), LockedBox(0), LockedBox(Data([1, 2, 3])))
            let store = try await Store.open(
                at: directory.databasePath, configuration: Self.configuration(available, downloads: downloads, bytes: bytes))
            let feed = directory.url.appendingPathComponent("feed.json")
            try Data(#"{"version": 1, "images": [{"url": "\#(Self.imageURL)"}]}"#.utf8).write(to: feed)
            #expect(try await store.sync(from: try FeedSource(feed.path)).images.downloaded == 1)
            // Gone from the cache (evicted, say), then fetched again: the server has new bytes.
            _ = try await store.images.delete(Self.imageURL)
            bytes.withLock { $0 = Data([4, 5, 6, 7]) }
            var forced = SyncOptions()
            forced.force = true
            #expect(try await store.sync(from: try FeedSource(feed.path), options: forced).images.downloaded == 1)
            try Data(#"{"version": 1, "deleted": {"images": ["\#(Self.imageURL)"]}}"#.utf8).write(to: feed)
            #expect(try await store.sync(from: try FeedSource(feed.path)).images.deleted == 1)
            await store.close()
        }
    }

    @Test func anImagePutByHandIsNotDeletedByAFeedThatNamedIt() async throws {
        try await withTemporaryDirectory { directory in
            let (available, downloads) = (LockedBox(true), LockedBox(0))
            let store = try await Store.open(
                at: directory.databasePath, configuration: Self.configuration(available, downloads: downloads))
            try await store.images.put(Self.imageURL, data: Data([9]))
            let feed = directory.url.appendingPathComponent("feed.json")
            try Data(#"{"version": 1, "images": [{"url": "\#(Self.imageURL)"}]}"#.utf8).write(to: feed)
            #expect(try await store.sync(from: try FeedSource(feed.path)).images.alreadyCached == 1)
            try Data(#"{"version": 1, "deleted": {"images": ["\#(Self.imageURL)"]}}"#.utf8).write(to: feed)
            #expect(try await store.sync(from: try FeedSource(feed.path)).images.deleted == 0)
            #expect(try await store.images.get(Self.imageURL)?.data == Data([9]))
            #expect(downloads.withLock { $0 } == 0)
            await store.close()
        }
    }
}
