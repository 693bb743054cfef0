import Foundation
import Testing

@testable import Store

/// Images a feed names by URL (no data), downloaded after the commit: a failed one is tried again
/// by the next sync, from a manifest as from a version-1 feed, and one that was downloaded is
/// deleted by the source's tombstone.
@Suite("Sync: downloaded images, retried and deleted")
struct SyncImageRetryTests {
    static let imageURL = "https://img.example/pic.png"
    static let namingFeed = #"{"version": 1, "images": [{"url": "\#(imageURL)"}]}"#
    static let deletingFeed = #"{"version": 1, "deleted": {"images": ["\#(imageURL)"]}}"#

    /// A store whose transport serves the image (`bytes`) only while `available` (404 else),
    /// counting `downloads`; and a local version-1 feed file beside it.
    struct Fixture {
        let store: Store
        let directory: TemporaryDirectory
        let available: LockedBox<Bool>
        let downloads: LockedBox<Int>
        let bytes: LockedBox<Data>

        /// The feed file, holding `text` now.
        func feed(_ text: String) throws -> FeedSource {
            let url = directory.url.appendingPathComponent("feed.json")
            try Data(text.utf8).write(to: url)
            return try FeedSource(url.path)
        }
    }

    static func withFixture(available: Bool, _ body: (Fixture) async throws -> Void) async throws {
        try await withTemporaryDirectory { directory in
            let (available, downloads, bytes) = (LockedBox(available), LockedBox(0), LockedBox(Data([1, 2, 3])))
            var configuration = Store.Configuration()
            configuration.transport = HTTPTransport { request in
                guard request.url.absoluteString == imageURL, available.withLock({ $0 }) else {
                    return HTTPResponse(url: request.url, status: 404)
                }
                downloads.withLock { $0 += 1 }
                return HTTPResponse(
                    url: request.url, status: 200, headers: ["Content-Type": "image/png"], body: bytes.withLock { $0 })
            }
            let store = try await Store.open(at: directory.databasePath, configuration: configuration)
            do {
                try await body(
                    Fixture(store: store, directory: directory, available: available, downloads: downloads, bytes: bytes))
            } catch {
                await store.close()
                throw error
            }
            await store.close()
        }
    }

    /// A published folder (version 2) whose snapshot names the image by URL only.
    static func publishedFolder(in directory: TemporaryDirectory) throws -> FeedSource {
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
        return try FeedSource(folder.appendingPathComponent("manifest.json").path)
    }

    static var forced: SyncOptions {
        var options = SyncOptions()
        options.force = true
        return options
    }

    @Test func aFailedImageOfAManifestSyncIsTriedAgainByTheNextSync() async throws {
        try await Self.withFixture(available: false) { fixture in
            let source = try Self.publishedFolder(in: fixture.directory)
            #expect(try await fixture.store.sync(from: source).images.failed == 1)
            fixture.available.withLock { $0 = true }
            // The cursor went back: the snapshot is read again, and the image fetched.
            let second = try await fixture.store.sync(from: source)
            #expect(second.status == .applied, "not up-to-date: \(second.status)")
            #expect(second.images.downloaded == 1 && second.images.failed == 0)
            #expect(try await fixture.store.images.contains(Self.imageURL))
            // Now at the head, with every image: up to date.
            #expect(try await fixture.store.sync(from: source).status == .upToDate)
            #expect(fixture.downloads.withLock { $0 } == 1)
        }
    }

    @Test(arguments: [SyncPolicy.keepExisting, .threeWay, .preferRemote])
    func aDownloadedImageIsDeletedByItsSourcesTombstone(policy: SyncPolicy) async throws {
        try await Self.withFixture(available: true) { fixture in
            var options = SyncOptions()
            options.policy = policy
            #expect(try await fixture.store.sync(from: fixture.feed(Self.namingFeed), options: options).images.downloaded == 1)
            let second = try await fixture.store.sync(from: fixture.feed(Self.deletingFeed), options: options)
            #expect(second.images.deleted == 1, "\(policy)")
            #expect(try await fixture.store.images.contains(Self.imageURL) == false)
        }
    }

    @Test func aFailedImageOfAForcedFullSyncIsTriedAgainFromTheSnapshot() async throws {
        try await Self.withFixture(available: true) { fixture in
            let source = try Self.publishedFolder(in: fixture.directory)
            #expect(try await fixture.store.sync(from: source).images.downloaded == 1)
            _ = try await fixture.store.images.delete(Self.imageURL)
            fixture.available.withLock { $0 = false }
            #expect(try await fixture.store.sync(from: source, options: Self.forced).images.failed == 1)
            fixture.available.withLock { $0 = true }
            // The full sync left no cursor: the snapshot is read again, and the image fetched.
            let again = try await fixture.store.sync(from: source)
            #expect(again.status == .applied && again.images.downloaded == 1, "\(again.status)")
        }
    }

    @Test func anImageFetchedAgainWithOtherBytesIsStillDeletedByTheTombstone() async throws {
        try await Self.withFixture(available: true) { fixture in
            #expect(try await fixture.store.sync(from: fixture.feed(Self.namingFeed)).images.downloaded == 1)
            // Gone from the cache (evicted, say), then fetched again: the server has new bytes.
            _ = try await fixture.store.images.delete(Self.imageURL)
            fixture.bytes.withLock { $0 = Data([4, 5, 6, 7]) }
            #expect(
                try await fixture.store.sync(from: fixture.feed(Self.namingFeed), options: Self.forced).images.downloaded == 1)
            #expect(try await fixture.store.sync(from: fixture.feed(Self.deletingFeed)).images.deleted == 1)
        }
    }

    @Test func anImagePutByHandIsNotDeletedByAFeedThatNamedIt() async throws {
        try await Self.withFixture(available: true) { fixture in
            try await fixture.store.images.put(Self.imageURL, data: Data([9]))
            #expect(try await fixture.store.sync(from: fixture.feed(Self.namingFeed)).images.alreadyCached == 1)
            #expect(try await fixture.store.sync(from: fixture.feed(Self.deletingFeed)).images.deleted == 0)
            #expect(try await fixture.store.images.get(Self.imageURL)?.data == Data([9]))
            #expect(fixture.downloads.withLock { $0 } == 0)
        }
    }
}
