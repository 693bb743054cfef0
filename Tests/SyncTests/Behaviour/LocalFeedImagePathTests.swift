import Foundation
import Testing

@testable import Store

/// A local feed's images may only be read from inside the feed's own folder: an absolute path,
/// a `file:` URL, a relative path that climbs out with `..`, or a symbolic link that points out
/// is a validation error naming the JSON path, and nothing is written.
@Suite(.timeLimit(.minutes(10)))
struct LocalFeedImagePathTests {
    /// `folder/feed/feed.json` with `images`; `folder/secret.txt` lies outside the feed's folder.
    private func refuses(_ url: String, setUp: (BehaviourFolder) throws -> Void = { _ in }) async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try folder.write("secret.txt", "the secret")
            try setUp(folder)
            let source = try folder.write(
                "feed/feed.json",
                behaviourFeed(
                    frameworks: [KindFixture.framework.json("f1", 1)], images: [imageJSON(url)]))

            let error = await #expect(throws: FeedValidationError.self) { try await store.sync(from: source) }
            #expect(error?.problems.map(\.path) == ["images[0].url"], "\(String(describing: error))")
            #expect(error?.problems.first?.source == source.url.path)
            #expect(try await store.images.list().isEmpty)
            #expect(try await store.frameworks.fetchAll().isEmpty)
        }
    }

    @Test func absolutePathIsRefused() async throws {
        try await refuses("/etc/hostname")
    }

    @Test func absolutePathToAFileInTheFeedsFolderIsRefusedToo() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try folder.write("feed/img/a.png", "A")
            let source = try folder.write(
                "feed/feed.json", behaviourFeed(images: [imageJSON(folder.file("feed/img/a.png").path)]))
            let error = await #expect(throws: FeedValidationError.self) { try await store.sync(from: source) }
            #expect(error?.problems.map(\.path) == ["images[0].url"])
        }
    }

    @Test func parentPathOutOfTheFolderIsRefused() async throws {
        try await refuses("../secret.txt")
        try await refuses("img/../../secret.txt")
        try await refuses("../../../../../../../../../../etc/hostname")
        try await refuses("img/%2e%2e/%2E%2E/secret.txt")
    }

    @Test func fileURLIsRefused() async throws {
        try await refuses("file:///etc/hostname")
        try await refuses("file:../secret.txt")
    }

    @Test func networkPathReferenceIsRefused() async throws {
        // `//host/path` resolves against a file: page to file://host/path.
        try await refuses("//localhost/etc/hostname")
    }

    @Test func symbolicLinkOutOfTheFolderIsRefused() async throws {
        try await refuses("img/link.png") { folder in
            try FileManager.default.createDirectory(at: folder.file("feed/img"), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: folder.file("feed/img/link.png").path,
                withDestinationPath: "../../secret.txt")
        }
        try await refuses("outside/secret.txt") { folder in
            try FileManager.default.createDirectory(at: folder.file("feed"), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: folder.file("feed/outside").path,
                withDestinationPath: folder.url.path)
        }
    }

    @Test func filesInsideTheFolderAreRead() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try folder.write("feed/img/a.png", "A")
            try folder.write("feed/b.png", "B")
            try FileManager.default.createSymbolicLink(
                atPath: folder.file("feed/img/link.png").path, withDestinationPath: "a.png")
            let source = try folder.write(
                "feed/feed.json",
                behaviourFeed(images: [
                    imageJSON("img/a.png"), imageJSON("img/../b.png"), imageJSON("img/link.png"),
                ]))
            let report = try await store.sync(from: source)
            #expect(report.images.downloaded == 3)
            #expect(report.images.failed == 0, "\(report.imageFailures)")
            #expect(try await store.images.get("img/a.png")?.data == Data("A".utf8))
            #expect(try await store.images.get("img/../b.png")?.data == Data("B".utf8))
            #expect(try await store.images.get("img/link.png")?.data == Data("A".utf8))
        }
    }

    /// The feed's folder itself may be reached through a symbolic link (`/tmp` often is one).
    @Test func aFeedFolderBehindASymbolicLinkStillWorks() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try folder.write("real/img/a.png", "A")
            try folder.write("real/feed.json", behaviourFeed(images: [imageJSON("img/a.png")]))
            try FileManager.default.createSymbolicLink(
                atPath: folder.file("alias").path, withDestinationPath: folder.file("real").path)
            let report = try await store.sync(from: .file(folder.file("alias/feed.json")))
            #expect(report.images.downloaded == 1, "\(report.imageFailures)")
        }
    }
}

/// The download checks again, where it opens the file: the folder may have changed since the
/// feed was validated, and a file location without a feed's folder is never read.
@Suite(.timeLimit(.minutes(10)))
struct LocalImageDownloadTests {
    @Test func theDownloadRefusesAFileOutsideTheFolder() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try folder.write("secret.txt", "the secret")
            try FileManager.default.createDirectory(at: folder.file("feed"), withIntermediateDirectories: true)
            // A link made after validation would point out: the download resolves it and refuses.
            try FileManager.default.createSymbolicLink(
                atPath: folder.file("feed/late.png").path, withDestinationPath: "../secret.txt")
            let pipeline = store.imagePipeline
            for (location, within) in [
                (folder.file("feed/late.png"), folder.file("feed")),
                (folder.file("feed/../secret.txt"), folder.file("feed")),
                (folder.file("secret.txt"), nil),
            ] {
                await #expect(throws: FeedSourceError.self) {
                    try await pipeline.load(
                        "late.png", from: location, fetcher: store.fetcher,
                        maximumBytes: 1 << 20, timeout: .seconds(5), within: within)
                }
            }
            #expect(try await store.images.list().isEmpty)
        }
    }
}

/// A local feed's `next` pages are read from its own folder only, like its images: a `next`
/// naming any other file is refused before that file is read.
@Suite(.timeLimit(.minutes(10)))
struct LocalFeedNextTests {
    /// The path a local feed's file is checked by: `.` and `..` resolved as text, empty parts
    /// dropped, never above the root.
    @Test func pathsAreNormalizedAsText() {
        let cases: [(String, String?)] = [
            ("/", "/"), ("/a/./b//../c/", "/a/c"), ("/a/..", "/"), ("/..", "/"), ("/a/../../b", "/b"),
            ("/a/b/..", "/a"), ("/é/ü/../x", "/é/x"), ("/a/...", "/a/..."), ("/a/.b/..c", "/a/.b/..c"),
            ("a/b", nil), ("/a\u{0}b", nil),
        ]
        for (path, expected) in cases { #expect(LocalImagePath.normalized(path) == expected, "\(path)") }
        // Many parts, then as many `..`: each cuts back its own part only.
        let long = "/" + String(repeating: "a/", count: 200_000) + String(repeating: "../", count: 199_999)
        #expect(LocalImagePath.normalized(long) == "/a")
    }

    @Test(arguments: ["/etc/passwd", "../secret.json", "file:///etc/passwd", "pages/../../secret.json"])
    func nextOutOfTheFolderIsRefused(_ next: String) async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            // A valid feed outside: were it read, its record would be applied.
            try folder.write("secret.json", behaviourFeed(frameworks: [KindFixture.framework.json("outside", 1)]))
            let source = try folder.write(
                "feed/feed.json", behaviourFeed(frameworks: [KindFixture.framework.json("f1", 1)], next: next))

            let error = await #expect(throws: FeedValidationError.self) { try await store.sync(from: source) }
            #expect(error?.problems.map(\.path) == ["next"], "\(String(describing: error))")
            #expect(error?.problems.first?.source == source.url.path)
            #expect(try await store.frameworks.fetchAll().isEmpty)
        }
    }

    /// A `next` is quoted clipped, as every text a problem names, and one that leads to a URL of
    /// more than 8,192 bytes is refused: a page's URL names it in each of its problems, and a
    /// `next` of 100 KB made the error of a page's hundred problems 10 MB (kept in the history).
    @Test func longNextIsRefusedAndQuotedClipped() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            let inside = String(repeating: "a/", count: 5_000) + "feed-2.json"
            let notAURL = "http://[" + String(repeating: "x", count: 100_000)
            for (next, fragment) in [(inside, "leads to a URL of"), (notAURL, "is not a URL")] {
                let source = try folder.write(
                    "feed/feed.json", behaviourFeed(frameworks: [KindFixture.framework.json("f1", 1)], next: next))
                let error = await #expect(throws: FeedValidationError.self) { try await store.sync(from: source) }
                #expect(error?.problems.map(\.path) == ["next"], "\(String(describing: error).prefix(300))")
                let message = error?.problems.first?.message ?? ""
                #expect(message.contains(fragment) && message.utf8.count < 200, "\(message.prefix(300))")
            }
            #expect(try await store.frameworks.fetchAll().isEmpty)
        }
    }

    @Test func nextInsideTheFolderIsFollowed() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try folder.write("feed/pages/feed-2.json", behaviourFeed(frameworks: [KindFixture.framework.json("f2", 1)]))
            let source = try folder.write(
                "feed/feed.json", behaviourFeed(frameworks: [KindFixture.framework.json("f1", 1)], next: "pages/feed-2.json"))
            let report = try await store.sync(from: source)
            #expect(report.frameworks == counts(inserted: 2))
        }
    }
}

/// An image larger than the whole cache budget could never be stored: a sync reads at most the
/// budget of it and says why it was not stored, rather than reading all of it first.
@Suite(.timeLimit(.minutes(10)))
struct ImageOverBudgetSyncTests {
    @Test func anImageOverTheBudgetIsNotReadPastIt() async throws {
        let folder = try BehaviourFolder()
        defer { folder.remove() }
        var configuration = behaviourConfiguration(transport: .unimplemented)
        configuration.imageCacheBudget = 1_000
        let store = try await Store.open(at: folder.file("store.sqlite").path, configuration: configuration)
        try folder.write("feed/big.png", String(repeating: "x", count: 5_000))
        try folder.write("feed/small.png", "small")
        let source = try folder.write("feed/feed.json", behaviourFeed(images: [imageJSON("big.png"), imageJSON("small.png")]))
        let report = try await store.sync(from: source)
        #expect(report.images.downloaded == 1 && report.images.failed == 1, "\(report.images)")
        #expect(report.imageFailures.first?.reason == "larger than the whole image cache budget of 1000 bytes; not stored")
        #expect(try await store.images.get("big.png") == nil)
        #expect(try await store.images.get("small.png")?.data == Data("small".utf8))
        await store.close()
    }
}
