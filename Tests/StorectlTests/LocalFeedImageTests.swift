import Foundation
import Testing

/// `storectl sync` of a local feed whose images name files outside its folder: refused with the
/// file and JSON path, exit 1, the store unchanged.
@Suite
struct LocalFeedImageTests {
    @Test("a local feed cannot copy /etc/hostname or ../ files into the cache", arguments: ["/etc/hostname", "../secret.txt"])
    func imagesOutsideTheFolderAreRefused(_ url: String) async throws {
        let cli = try Storectl()
        // The store exists: a first sync that fails removes the store it created.
        expectSuccess(try await cli("migrate"))
        let folder = try cli.directory.makeDirectory("feed")
        try Data("secret".utf8).write(to: URL(fileURLWithPath: cli.directory.file("secret.txt")))
        let feed = URL(fileURLWithPath: folder).appendingPathComponent("feed.json")
        try Data(#"{"version": 1, "images": [{"url": "\#(url)"}]}"#.utf8).write(to: feed)

        let result = try await cli.run(["sync", feed.path])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("\(feed.path): images[0].url: '\(url)'"), "\(result)")
        let list = try await cli.run(["images", "list", "--json"])
        #expect(list.status == 0 && !list.stdout.contains(url), "\(list)")
    }

    @Test("a feed read from stdin names no file: its folder would be /dev")
    func aFeedFromStdinHasNoFolder() async throws {
        // "next": "kmsg" hung the sync on /dev/kmsg; "zero" read zeros up to the size limit.
        let cli = try Storectl()
        expectSuccess(try await cli("migrate"))
        let before = expectSuccess(try await cli("export")).stdoutData
        for (feed, path) in [
            (#"{"version": 1, "next": "zero"}"#, "next"), (#"{"version": 1, "next": "../etc/hostname"}"#, "next"),
            (#"{"version": 1, "images": [{"url": "null"}]}"#, "images[0].url"),
        ] {
            let result = try await cli("sync", "-", stdin: Data(feed.utf8))
            expectFailure(result, status: 1, mentioning: ["/dev/stdin: \(path)", "no folder"])
        }
        #expect(expectSuccess(try await cli("export")).stdoutData == before, "the store is unchanged")
        // Absolute http(s) image URLs are fine (not downloaded here: the feed's records are what counts).
        let feed =
            #"{"version": 1, "frameworks": [{"id": "a", "name": "A", "imageName": "a", "urlString": "https://a", "description": "d"}]}"#
        expectSuccess(try await cli("sync", "-", "--quiet", stdin: Data(feed.utf8)))
    }
}
