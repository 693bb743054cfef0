import Foundation
import Testing

@testable import Store

/// Export pages were cut by record count only: a page of large images grew with them (twenty
/// 20 MB images, one page of 533 MB), past what any client takes (`SyncOptions.maximumBytes`).
/// A page now also ends before the record that would take it past `pageBytes`.
@Suite("Export pages: bounded in bytes as well as records", .timeLimit(.minutes(10)))
struct ExportPageBytesTests {
    /// 3,000-byte images (4,000 bytes of base64 each) and a few frameworks.
    func fill(_ store: Store, large: Int = 0) async throws {
        try await store.frameworks.insert(
            (0..<5).map { Framework(id: "fw-\($0)", name: "F", imageName: "f", urlString: "https://f", description: "d") })
        for index in 0..<12 {
            let data = Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) })
            try await store.images.put("https://example.com/\(index).png", data: data, contentType: "image/png")
        }
        if large > 0 {
            try await store.images.put(
                "https://example.com/large.png", data: Data(repeating: 0xAB, count: large), contentType: "image/png")
        }
    }

    @Test("pages end before the record that would pass the bound; synced back, the copy is the store")
    func pagesEndAtTheirBytes() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try await fill(store, large: 30_000)
            let out = folder.file("pages")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let bound = 10_000
            let names = try await store.exportFeedPages(pageSize: 1_000, pageBytes: bound, toFolder: out.path)
            #expect(names.count > 3, "\(names)")
            let pages = try names.map { try Data(contentsOf: out.appendingPathComponent($0)) }
            // The page's closing brackets, empty arrays and `next` are not weighed: a few hundred bytes.
            let bounded = pages.filter { $0.count <= bound + 300 }
            // Only the 30,000-byte image (40,000 of base64) is over: on a page of its own.
            let over = pages.filter { $0.count > bound + 300 }
            #expect(over.count == 1 && bounded.count == pages.count - 1, "\(pages.map(\.count))")
            if let page = over.first {
                let feed = try JSONSerialization.jsonObject(with: page) as? [String: Any]
                let images = feed?["images"] as? [[String: Any]]
                #expect(images?.count == 1 && images?.first?["url"] as? String == "https://example.com/large.png")
            }
            // Without the bound the same store is one page.
            let whole = folder.file("whole")
            try FileManager.default.createDirectory(at: whole, withIntermediateDirectories: true)
            #expect(try await store.exportFeedPages(pageSize: 1_000, toFolder: whole.path) == ["feed.json"])

            let copy = try await openSecondStore(in: folder, name: "copy.sqlite")
            _ = try await copy.sync(from: .file(out.appendingPathComponent("feed.json")))
            #expect(try await copy.exportFeed() == (try await store.exportFeed()))
            await copy.close()
        }
    }

    @Test("a bound of 1 byte gives every record a page of its own; page size still counts")
    func everyRecordAlone() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try await fill(store)
            let out = folder.file("pages")
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            #expect(try await store.exportFeedPages(pageSize: 1_000, pageBytes: 1, toFolder: out.path).count == 17)
            let counted = folder.file("counted")
            try FileManager.default.createDirectory(at: counted, withIntermediateDirectories: true)
            #expect(try await store.exportFeedPages(pageSize: 4, pageBytes: 1 << 30, toFolder: counted.path).count == 5)
        }
    }
}
