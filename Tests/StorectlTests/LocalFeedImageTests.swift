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

    /// Images have their own cap, `--max-image-bytes` (`SyncOptions.maximumImageBytes`, 32MiB
    /// by default), not `--max-bytes`: a larger image is a failed image (exit 3, retried next
    /// sync), the records applied.
    @Test("--max-image-bytes caps each image; --max-bytes does not")
    func maxImageBytesCapsEachImage() async throws {
        let cli = try Storectl()
        let folder = try cli.directory.makeDirectory("feed")
        try Data(repeating: 7, count: 2000).write(to: URL(fileURLWithPath: folder + "/big.png"))
        let feed = URL(fileURLWithPath: folder).appendingPathComponent("feed.json")
        try Data(
            #"""
            {"version": 1, "images": [{"url": "big.png"}],
             "frameworks": [{"id": "a", "name": "A", "imageName": "a", "urlString": "https://a", "description": "d"}]}
            """#.utf8
        ).write(to: feed)

        // Exit 3: the records applied (the report on stdout), the image listed on stderr.
        for (arguments, limit) in [
            (["--max-image-bytes", "1000"], 1000), (["--max-image-bytes", "1KiB", "--max-bytes", "1MiB"], 1024),
        ] {
            let result = try await cli.run(["sync", feed.path, "--quiet"] + arguments)
            #expect(result.status == 3, "\(result)")
            #expect(result.stderr.contains("image big.png: "), "\(result)")
            #expect(result.stderr.contains("larger than the limit of \(limit) bytes"), "\(result)")
        }
        for bad in ["0", "-1", "lots"] {
            expectFailure(
                try await cli("sync", feed.path, "--max-image-bytes", bad), status: exitUsage, mentioning: ["--max-image-bytes"])
        }
        #expect(try await cli.run(["images", "list", "--json"]).stdout.contains("big.png") == false)
        expectSuccess(try await cli("sync", feed.path, "--quiet", "--max-image-bytes", "2000"))
        #expect(try await cli.run(["images", "list", "--json"]).stdout.contains("big.png"))
    }
}
