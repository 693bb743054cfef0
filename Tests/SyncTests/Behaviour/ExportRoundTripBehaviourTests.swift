import Foundation
import Testing

@testable import Store

/// An export synced into an empty store exports the same bytes, one page or many.
@Suite(.timeLimit(.minutes(10)))
struct ExportRoundTripBehaviourTests {
    static let hostile = "'); DROP TABLE frameworks; --"
    static let frameworks = [
        Framework(
            id: hostile, name: "Robert'); DROP TABLE orders;--", imageName: "%_*?[]",
            urlString: "javascript:alert(1)", description: "\"quoted\" \\ backslash\nnew line\ttab \u{01}\u{1F} </script> \\u0000"
        ),
        Framework(
            id: "emoji-👩‍👩‍👧‍👦", name: "🍎 Apple 🏳️‍🌈", imageName: "🖼", urlString: "https://example.com/é?q=ü&x=%20",
            description: "RTL \u{200F}עברית\u{200F} and override \u{202E}txet\u{202C}, separators \u{2028}\u{2029}, BOM \u{FEFF}"),
        Framework(id: "e\u{0301}", name: "decomposed", imageName: "", urlString: "", description: ""),
        Framework(id: "é", name: "precomposed", imageName: "", urlString: "", description: "𝄞 outside the BMP"),
        Framework(
            id: "arkit", name: "ARKit", imageName: "arkit", urlString: "https://developer.apple.com/augmented-reality/arkit",
            description: "ARKit 5 brings Location Anchors to London"),
    ]
    static let orders = [
        Order(
            id: "o-1", placedAt: Date(timeIntervalSince1970: 1_795_000_000.25),
            items: [
                OrderItem(itemName: "Milk 🥛", price: Money("0.1")!, aisle: 0, quantity: 3),
                OrderItem(itemName: "Bread'; --", price: Money("0.2")!, aisle: 12),
                OrderItem(itemName: "Expensive", price: Money("999999.99")!, aisle: 1, quantity: 1000),
            ]),
        Order(id: "o-2", placedAt: Date(timeIntervalSince1970: 0), items: [OrderItem(itemName: "", price: .zero, aisle: 0)]),
    ]
    static let events = [
        Event(id: "e-1", title: "WWDC keynote", date: CalendarDate("2026-06-08")!, notes: "Hall A"),
        Event(id: "e/../../etc/passwd", title: "\u{200F}כנס", date: CalendarDate("2024-02-29")!),
        Event(id: "e-3", title: hostile, date: CalendarDate("0001-01-01")!, notes: ""),
        Event(id: "e-4", title: "last", date: CalendarDate("9999-12-31")!, notes: "multi\nline"),
    ]
    static let images: [(String, Data, String?)] = [
        ("https://example.com/img/arkit.png", Data([0x89, 0x50, 0x4E, 0x47, 0, 0xFF, 0xFE, 10, 13]), "image/png"),
        ("img/metal.png", Data((0..<600).map { UInt8($0 % 256) }), nil),
    ]

    func fill(_ store: Store) async throws {
        try await store.frameworks.insert(Self.frameworks)
        for order in Self.orders { try await store.orders.insert(order) }
        for event in Self.events { try await store.events.insert(event) }
        for (url, data, type) in Self.images { try await store.images.put(url, data: data, contentType: type) }
    }

    @Test func exportSyncExportIsByteIdentical() async throws {
        try await withBehaviourStore(transport: .unimplemented) { original, folder in
            try await fill(original)
            let export = try await original.exportFeed()
            #expect(export.contains(#""version": 1"#))
            #expect(export.contains(#""price": 0.10"#))

            let source = try folder.write("export/feed.json", export)
            let copy = try await openSecondStore(in: folder, name: "copy.sqlite")
            let report = try await copy.sync(from: source)
            await copy.close()
            #expect(report.frameworks == counts(inserted: Self.frameworks.count))
            #expect(report.orders == counts(inserted: Self.orders.count))
            #expect(report.events == counts(inserted: Self.events.count))
            #expect(report.images.stored == Self.images.count)

            let reopened = try await openSecondStore(in: folder, name: "copy.sqlite")
            #expect(try await reopened.exportFeed() == export)
            // The records themselves, not just their text.
            #expect(Set(try await reopened.frameworks.fetchAll()) == Set(Self.frameworks))
            #expect(try await reopened.frameworks.find(Self.hostile)?.name == "Robert'); DROP TABLE orders;--")
            #expect(try await reopened.frameworks.find("e\u{0301}")?.name == "decomposed")
            #expect(try await reopened.frameworks.find("é")?.name == "precomposed")
            #expect(Set(try await reopened.orders.fetchAll()) == Set(Self.orders))
            // 0.10 × 3 + 0.20 + 999999.99 × 1000, exactly.
            #expect(try await reopened.orders.total("o-1") == Money(minorUnits: 30 + 20 + 99_999_999 * 1000))
            #expect(Set(try await reopened.events.fetchAll()) == Set(Self.events))
            for (url, data, type) in Self.images {
                let image = try #require(try await reopened.images.get(url))
                #expect(image.data == data)
                #expect(image.contentType == type)
            }
            // Syncing the export again changes nothing.
            let again = try await reopened.sync(from: source, options: SyncOptions(policy: .preferRemote))
            #expect(again.frameworks == counts(unchanged: Self.frameworks.count))
            #expect(again.images.alreadyCached == Self.images.count)
            #expect(try await reopened.exportFeed() == export)
            await reopened.close()
        }
    }

    /// Exports stream record by record (`FeedPageWriter`): every way out (a string, a file, a
    /// handle, pages in a folder) gives the bytes `JSONWriter` gives the whole document.
    @Test func streamedExportsAreTheBytesOfTheWholeDocument() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try await fill(store)
            func whole(_ records: [(RecordKind, JSONValue)], next: String?) -> String {
                var members = [JSONMember("version", .integer(1))]
                for kind in RecordKind.allCases {
                    members.append(JSONMember(kind.plural, .array(records.filter { $0.0 == kind }.map(\.1))))
                }
                if let next { members.append(JSONMember("next", .string(next))) }
                return JSONWriter(pretty: true).string(.object(members)) + "\n"
            }
            let records = try await store.read { db -> [(RecordKind, JSONValue)] in
                try db.frameworks.fetchAll().map { (RecordKind.framework, $0.jsonValue) }
                    + db.orders.fetchAll().map { (RecordKind.order, $0.jsonValue()) }
                    + db.events.fetchAll().sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }.map {
                        (RecordKind.event, $0.jsonValue)
                    }
                    + db.images(budget: .max, now: Date()).fetchAll().map {
                        (RecordKind.image, $0.jsonValue(includingData: true))
                    }
            }
            let expected = whole(records, next: nil)
            #expect(try await store.exportFeed() == expected)

            try await store.exportFeed(toFile: folder.file("out.json").path)
            #expect(try String(contentsOf: folder.file("out.json"), encoding: .utf8) == expected)
            #expect(FileManager.default.createFile(atPath: folder.file("handle.json").path, contents: nil))
            let handle = try FileHandle(forWritingTo: folder.file("handle.json"))
            try await store.exportFeed(to: handle)
            try handle.close()
            #expect(try String(contentsOf: folder.file("handle.json"), encoding: .utf8) == expected)

            for size in [1, 2, 3, records.count, records.count + 5] {
                let pages = try await store.exportFeedPages(pageSize: size)
                let chunks = stride(from: 0, to: records.count, by: size).map {
                    Array(records[$0..<min($0 + size, records.count)])
                }
                #expect(
                    pages.map(\.text)
                        == chunks.enumerated().map { index, chunk in
                            whole(chunk, next: index + 1 < chunks.count ? "feed-\(index + 2).json" : nil)
                        }, "page size \(size)")
                let out = folder.file("pages-\(size)")
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                let names = try await store.exportFeedPages(pageSize: size, toFolder: out.path)
                #expect(names == pages.map(\.name))
                for page in pages {
                    #expect(try String(contentsOf: out.appendingPathComponent(page.name), encoding: .utf8) == page.text)
                }
                // Nothing but the pages: every temporary file was renamed into place.
                #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out.path)) == Set(names))
            }
        }
    }

    @Test func anEmptyStoreExportsAnEmptyFeed() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, _ in
            let expected =
                "{\n  \"version\": 1,\n  \"frameworks\": [],\n  \"orders\": [],\n  \"events\": [],\n  \"images\": []\n}\n"
            let exported = try await store.exportFeed()
            let pages = try await store.exportFeedPages(pageSize: 2)
            #expect(exported == expected)
            #expect(pages.map(\.text) == [expected])
        }
    }

    @Test func pagedExportSyncsToTheSameStore() async throws {
        try await withBehaviourStore(transport: .unimplemented) { original, folder in
            try await fill(original)
            let export = try await original.exportFeed()
            let pages = try await original.exportFeedPages(pageSize: 2)
            let recordCount = Self.frameworks.count + Self.orders.count + Self.events.count + Self.images.count
            #expect(pages.count == (recordCount + 1) / 2)
            #expect(pages.first?.name == "feed.json")
            #expect(pages.dropFirst().map(\.name) == (2...pages.count).map { "feed-\($0).json" })
            for page in pages { try folder.write("paged/\(page.name)", page.text) }

            let copy = try await openSecondStore(in: folder, name: "paged.sqlite")
            let report = try await copy.sync(from: .file(folder.file("paged/feed.json")))
            #expect(
                report.frameworks.inserted + report.orders.inserted + report.events.inserted + report.images.stored == recordCount
            )
            #expect(try await copy.exportFeed() == export)
            #expect(try await copy.exportFeedPages(pageSize: 2) == pages)
            #expect(try await copy.syncHistory().count == 1)
            await copy.close()
        }
    }

    @Test func exportOfAnEmptyStoreRoundTrips() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            let export = try await store.exportFeed()
            let source = try folder.write("feed.json", export)
            let report = try await store.sync(from: source)
            #expect(ReportCounts(report) == ReportCounts(SyncReport(status: .applied, source: "", policy: .keepExisting)))
            #expect(try await store.exportFeed() == export)
        }
    }
}
