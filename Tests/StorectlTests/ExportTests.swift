import Foundation
import Testing

@Suite("storectl export")
struct ExportTests {
    static let imageBytes = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0xFE, 0x7F])

    /// A store holding one or two records of every kind.
    func populated() async throws -> Storectl {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", "arkit", "--name", "ARKit", "--image-name", "arkit",
                "--url", "https://developer.apple.com/augmented-reality/arkit", "--description", "AR."))
        expectSuccess(
            try await storectl(
                "orders", "add", "--id", "o-1001", "--placed-at", "2026-11-20T09:30:00Z",
                "--item", "Milk:2.49:3:2", "--item", "Tea:0.10:1"))
        expectSuccess(
            try await storectl(
                "events", "add", "--id", "e-7", "--title", "WWDC keynote", "--date", "2026-06-08", "--notes", "Hall A"))
        expectSuccess(try await storectl("events", "add", "--id", "e-3", "--title", "No notes", "--date", "2026-06-09"))
        expectSuccess(
            try await storectl(
                "images", "put", "https://example.com/img/arkit.png",
                try storectl.directory.write(Self.imageBytes, to: "arkit.png")))
        expectSuccess(
            try await storectl("images", "put", "img/raw", try storectl.directory.write(Data("raw".utf8), to: "raw.bin")))
        return storectl
    }

    /// Checks a parsed feed against `populated()`.
    func expectFeed(_ feed: [String: Any], imageData: Bool) throws {
        #expect(Set(feed.keys) == ["version", "frameworks", "orders", "events", "images"])
        #expect(JSON.integer(feed["version"]) == 1)

        let frameworks = try #require(feed["frameworks"] as? [[String: Any]])
        try #require(frameworks.count == 1)
        #expect(Set(frameworks[0].keys) == ["id", "name", "imageName", "urlString", "description"])
        #expect(frameworks[0]["urlString"] as? String == "https://developer.apple.com/augmented-reality/arkit")

        let orders = try #require(feed["orders"] as? [[String: Any]])
        try #require(orders.count == 1)
        #expect(Set(orders[0].keys) == ["id", "placedAt", "items"], "the feed's order has no total")
        #expect(orders[0]["placedAt"] as? String == "2026-11-20T09:30:00Z")
        let items = try #require(orders[0]["items"] as? [[String: Any]])
        #expect(items.count == 2)
        for item in items {
            #expect(Set(item.keys) == ["itemName", "price", "aisle", "quantity"])
            #expect(JSON.isNumber(item["price"]))
        }
        #expect(items.map { JSON.cents($0["price"]) } == [249, 10])
        #expect(items.map { JSON.integer($0["quantity"]) } == [2, 1])

        let events = try #require(feed["events"] as? [[String: Any]])
        #expect(events.map { $0["id"] as? String } == ["e-3", "e-7"], "ordered by id")
        #expect(Set(events[0].keys) == ["id", "title", "date"])
        #expect(Set(events[1].keys) == ["id", "title", "date", "notes"])
        #expect(events[1]["date"] as? String == "2026-06-08")

        let images = try #require(feed["images"] as? [[String: Any]])
        #expect(images.map { $0["url"] as? String } == ["https://example.com/img/arkit.png", "img/raw"])
        #expect(images[0]["contentType"] as? String == "image/png")
        if imageData {
            #expect(Set(images[0].keys) == ["url", "contentType", "data"])
            #expect(Set(images[1].keys) == ["url", "data"])
            #expect((images[0]["data"] as? String).flatMap { Data(base64Encoded: $0) } == Self.imageBytes)
            #expect((images[1]["data"] as? String).flatMap { Data(base64Encoded: $0) } == Data("raw".utf8))
        } else {
            #expect(Set(images[0].keys) == ["url", "contentType"])
            #expect(Set(images[1].keys) == ["url"])
        }
    }

    @Test("export to stdout: a version-1 feed with every record, image bytes as base64")
    func stdout() async throws {
        let storectl = try await populated()
        let result = expectSuccess(try await storectl("export"))
        try expectFeed(try JSON.object(result.stdout), imageData: true)
        #expect(result.stdout.contains("\"version\": 1"))
        #expect(result.stdout.contains("\"price\": 2.49"))
    }

    @Test("--no-image-data leaves out data")
    func noImageData() async throws {
        let storectl = try await populated()
        let result = expectSuccess(try await storectl("export", "--no-image-data"))
        try expectFeed(try JSON.object(result.stdout), imageData: false)
        #expect(!result.stdout.contains("\"data\""))
    }

    @Test("--out writes the same document to a file, nothing to stdout; export is deterministic")
    func outFile() async throws {
        let storectl = try await populated()
        let first = expectSuccess(try await storectl("export")).stdoutData
        let path = storectl.directory.file("feed.json")
        let written = expectSuccess(try await storectl("export", "--out", path))
        #expect(written.stdoutData.isEmpty)
        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(file == first)
        try expectFeed(try JSON.object(String(decoding: file, as: UTF8.self)), imageData: true)

        let light = storectl.directory.file("light.json")
        expectSuccess(try await storectl("export", "--out", light, "--no-image-data"))
        try expectFeed(try JSON.object(String(contentsOfFile: light, encoding: .utf8)), imageData: false)
    }

    @Test("--page-bytes ends a page before the record that would pass it; the pages sync back to the same store")
    func pageBytes() async throws {
        let storectl = try await populated()
        let big = try storectl.directory.write(Data(repeating: 0x42, count: 3_000), to: "big.bin")
        expectSuccess(try await storectl("images", "put", "https://example.com/big.png", big))
        let folder = storectl.directory.file("pages")
        // Every record but the big image is far under 1 KiB: a few per page; the image (4,000
        // bytes of base64) on a page of its own.
        let written = expectSuccess(try await storectl("export", "--out", folder, "--page-size", "100", "--page-bytes", "1KiB"))
        let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(names.count >= 3, "\(names)")
        #expect(written.stderr.contains("wrote \(names.count) pages to \(folder)"), "\(written)")
        let sizes = try names.map { try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0)).count }
        #expect(sizes.filter { $0 > 1_300 }.count == 1, "\(zip(names, sizes).map { "\($0) \($1)" })")

        let copy = storectl.directory.file("copy.sqlite")
        expectSuccess(try await storectl("--db", copy, "sync", folder + "/feed.json"))
        #expect(
            expectSuccess(try await storectl("--db", copy, "export")).stdoutData
                == expectSuccess(try await storectl("export")).stdoutData)
    }

    @Test("an empty store exports empty arrays")
    func empty() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        let feed = try JSON.object(expectSuccess(try await storectl("export")).stdout)
        #expect(JSON.integer(feed["version"]) == 1)
        for kind in ["frameworks", "orders", "events", "images"] {
            #expect((feed[kind] as? [Any])?.isEmpty == true, "\(kind)")
        }
    }

    @Test("--out into a missing folder fails naming the path")
    func unwritable() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        let path = storectl.directory.file("no/such/folder/feed.json")
        expectFailure(try await storectl("export", "--out", path), mentioning: [path])
    }
}
