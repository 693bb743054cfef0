import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// Sync reads every page from disk in chunks (`JSONChunkReader`), never whole. Whatever the
/// chunk size, and so wherever a chunk ends (inside a string, an escape, a number, a record,
/// a line), a page must give exactly what reading it whole gives: the same records, or the
/// same problems with the same JSON paths, lines and columns.
@Suite struct StreamingFeedBehaviourTests {
    static let chunkSizes = [1, 2, 3, 5, 8, 64, 4096, JSONChunkReader.chunkSize]

    /// Documents that cut in interesting places: escapes, surrogates, numbers, literals, BOM,
    /// many lines, errors early and late, and every invalid feed of the validation tests.
    static var documents: [String] {
        let framework =
            #"{"id": "a\u00e9\"\\", "name": "Quote \" and \\ and é 😀 \ud83d\ude00", "imageName": "a", "urlString": "u", "description": "d"}"#
        let order =
            #"{"id": "o1", "placedAt": "2026-11-20T09:30:00Z", "items": [{"itemName": "Milk", "price": 2.49, "aisle": 3, "quantity": 12}]}"#
        let event = #"{"id": "e1", "title": "T", "date": "2026-06-08", "notes": null}"#
        var documents = [
            #"{"version": 1, "frameworks": [\#(framework)], "orders": [\#(order)], "events": [\#(event)], "next": null}"#,
            "\u{FEFF}" + #"{"version": 1, "frameworks": [\#(framework)]}"#,
            "{\n  \"version\": 1,\n  \"frameworks\": [\n    \(framework),\n    {\"id\": \"b\",\n \"name\": 3}\n  ],\n  \"events\": [\(event)]\n}\n",
            #"{"version": 1, "frameworks": [\#(framework), \#(framework)]}"#,
            #"{"version": 1, "frameworks": [\#(framework)], "orders": [\#(order)] "events": []}"#,
            "{\"version\": 1,\n\"frameworks\": [\(framework),\n{\"id\": \"x\\q\"}]}",
            #"{"version": 1, "frameworks": [\#(framework)]} trailing"#,
            #"{"version": 1, "frameworks": [\#(framework)"#,
            #"{"version": 1, "frameworks": [], "deleted": {"frameworks": ["a", "b"], "events": ["e1"]}, "next": "p2.json"}"#,
            #"{"version": 1e999, "frameworks": [1, true, null, "s", -0.5e-3, [], {}]}"#,
            #"{"version": 1, "frameworks": [{"id": "z", "name": "A", "name": "B", "imageName": "a", "urlString": "u", "description": "d"}]}"#,
            "", "   ", "[]", "{}", #"{"version": 1,}"#, #"{"version": tru}"#, #"{"version": 1, "events": [{"id": "\ud800"}]}"#,
        ]
        documents += InvalidFeed.all.map { String(decoding: $0.body, as: UTF8.self) }
        return documents
    }

    /// What reading `text` gives: the feed, or the error as it would be reported.
    static func outcome(
        keysInMemory: Int = FeedKeyRegistry.defaultMemoryLimit,
        _ read: (inout FeedValidator, inout FeedCollector) throws -> Void
    ) -> String {
        var validator = FeedValidator(keysInMemory: keysInMemory)
        var collector = FeedCollector()
        do {
            try read(&validator, &collector)
            try validator.finish()
            return "\(collector.feed)"
        } catch {
            return "error: \(error)"
        }
    }

    @Test(arguments: chunkSizes)
    func aPageReadInChunksGivesWhatReadingItWholeGives(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        let pageURL = URL(string: "https://feed.invalid/feed.json")!
        for (index, text) in Self.documents.enumerated() {
            let data = Data(text.utf8)
            let file = URL(fileURLWithPath: try directory.write(data, to: "page-\(index).json"))
            let whole = Self.outcome { try $0.add(data, source: "feed", pageURL: pageURL, into: &$1) }
            let chunked = Self.outcome {
                try $0.add(file: file, source: "feed", pageURL: pageURL, into: &$1, chunkSize: chunkSize)
            }
            #expect(chunked == whole, "document \(index) at chunk size \(chunkSize): \(text.prefix(200))")
        }
    }

    /// Past `keysInMemory` keys, duplicates are found in a temporary database on disk: the
    /// same problems, quoting the same first locations, across pages and tombstones.
    @Test(arguments: [0, 1, 2, 5])
    func keysRememberedOnDiskGiveTheSameProblems(keysInMemory: Int) throws {
        let pageURL = URL(string: "https://feed.invalid/feed.json")!
        let framework = { (id: String) in
            #"{"id": "\#(id)", "name": "N", "imageName": "i", "urlString": "u", "description": "d"}"#
        }
        let pages = [
            #"{"version": 1, "frameworks": [\#(framework("a")), \#(framework("b")), \#(framework("e\u{0301}"))], "deleted": {"frameworks": ["x", "x"], "events": ["a"]}}"#,
            #"{"version": 1, "frameworks": [\#(framework("c")), \#(framework("a")), \#(framework("é")), \#(framework("x"))], "deleted": {"frameworks": ["b", "y"]}}"#,
        ]
        let documents = [pages] + Self.documents.map { [$0] }
        for document in documents {
            func read(_ validator: inout FeedValidator, _ collector: inout FeedCollector) throws {
                for (index, page) in document.enumerated() {
                    try validator.add(Data(page.utf8), source: "page-\(index + 1)", pageURL: pageURL, into: &collector)
                }
            }
            let inMemory = Self.outcome(read)
            let onDisk = Self.outcome(keysInMemory: keysInMemory, read)
            #expect(onDisk == inMemory, "\(document.joined(separator: " + ").prefix(200))")
        }
        // The two pages do have duplicates, a conflict with a tombstone and a repeated tombstone.
        let twoPages = Self.outcome(keysInMemory: keysInMemory) { validator, collector in
            for (index, page) in pages.enumerated() {
                try validator.add(Data(page.utf8), source: "page-\(index + 1)", pageURL: pageURL, into: &collector)
            }
        }
        #expect(twoPages.contains("'a' is a duplicate: it already appears at page-1: frameworks[0].id"), "\(twoPages)")
        #expect(twoPages.contains("'x' is already deleted at page-1: deleted.frameworks[0]"), "\(twoPages)")
        #expect(twoPages.contains("'b' is also in page-1: frameworks[1].id"), "\(twoPages)")
    }

    @Test(arguments: chunkSizes)
    func theSkimForNextAgreesWithTheQuickScan(chunkSize: Int) throws {
        let directory = try TemporaryDirectory()
        let documents =
            Self.documents + [
                #"{"next": "a\"b\u00e9.json", "version": 1}"#,
                #"{"frameworks": [{"next": "nested.json", "id": "x\"next\""}], "notes": "\"next\": \"no\"", "next": null}"#,
                #"{"deleted": {"next": "nested.json"}, "version": 1}"#, #"["next", "p2.json"]"#, #"{"next": 3}"#,
                "\u{FEFF}" + #"{"next": "bom.json"}"#, #"{"version": 1, "frameworks": [], "next": "feed-2.json"}"#,
            ]
        for (index, text) in documents.enumerated() {
            let data = Data(text.utf8)
            let path = try directory.write(data, to: "next-\(index).json")
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            let skimmed = JSONParser.topLevelMember(
                "next", in: JSONChunkReader(descriptor: handle.fileDescriptor, chunkSize: chunkSize))
            let scanned = JSONParser.topLevelMember("next", in: data)
            // The skim reads strictly up to the member; the quick scan may find a `next` after
            // an error the strict read stops at. Where the document is valid they agree.
            if (try? JSONParser.parse(data)) != nil {
                #expect(skimmed == scanned, "document \(index) at chunk size \(chunkSize): \(text.prefix(200))")
            } else if skimmed != nil {
                #expect(skimmed == scanned, "document \(index) at chunk size \(chunkSize): \(text.prefix(200))")
            }
        }
    }

    /// Strings are scanned eight bytes at a time until a byte needs a look of its own: wherever
    /// in a long string a control character, an escape, a quote or a non-ASCII character is,
    /// it is found at its own column.
    @Test func aStringIsReadTheSameWhereverItsSpecialByteIs() throws {
        let plain = "abcdefghijklmnopqrstuvwxyz"
        for position in 0...plain.count {
            let head = String(plain.prefix(position)), tail = String(plain.dropFirst(position))
            #expect(try JSONParser.parse(Data("\"\(head)é\(tail)\"".utf8)) == .string(head + "é" + tail))
            #expect(try JSONParser.parse(Data("\"\(head)\\n\(tail)\"".utf8)) == .string(head + "\n" + tail))
            #expect(try JSONParser.parse(Data("[\"\(head)\", \"\(tail)\"]".utf8)) == .array([.string(head), .string(tail)]))
            do {
                _ = try JSONParser.parse(Data("\"\(head)\u{1}\(tail)\"".utf8))
                Issue.record("a control character at \(position) was accepted")
            } catch let error as JSONParseError {
                #expect(error.column == position + 2, "\(error)")
                #expect(error.message == "unescaped control character U+0001 in a string")
            }
        }
    }

    /// The byte search that spares most pages the skim for `next` answers false only when no
    /// member can be named `next`, wherever its blocks end.
    @Test(arguments: [1, 2, 3, 5, 8, 64, JSONChunkReader.chunkSize])
    func theSearchForANextNameMissesNoneWhereverItsBlocksEnd(blockSize: Int) throws {
        let directory = try TemporaryDirectory()
        let cases: [(String, Bool)] = [
            (#"{"version": 1, "frameworks": [{"id": "next-door", "name": "next"}]}"#, true),
            (#"{"version": 1, "frameworks": [], "next": "feed-2.json"}"#, true),
            (#"{"version": 1, "ne\u0078t": "feed-2.json"}"#, true),
            (#"{"version": 1, "frameworks": [{"id": "nextdoor", "name": "the next one", "x": "nex"}]}"#, false),
            (#"{"version": 1, "frameworks": [{"id": "a\\b", "name": "\"n\"ext"}]}"#, false),
            ("", false),
        ]
        for (index, (text, expected)) in cases.enumerated() {
            let path = try directory.write(Data(text.utf8), to: "search-\(index).json")
            let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            defer { try? handle.close() }
            let found = JSONChunkReader.mayHoldName("next", descriptor: handle.fileDescriptor, blockSize: blockSize)
            #expect(found == expected, "case \(index) at block size \(blockSize): \(text)")
        }
    }

    /// A feed bigger than a chunk, with one string bigger than a chunk, syncs whole from a file;
    /// an error in its last record is reported with the line of the whole document.
    @Test func aFeedLargerThanAChunkSyncsAndReportsLinesOfTheWholeDocument() async throws {
        let directory = try TemporaryDirectory()
        let padding = String(repeating: "x", count: 300)
        var lines = (0..<5000).map { index in
            #"{"id": "fw-\#(index)", "name": "N \"\#(index)\" é", "imageName": "i", "urlString": "u", "description": "\#(padding)"}"#
        }
        lines[2500] =
            #"{"id": "huge", "name": "H", "imageName": "i", "urlString": "u", "description": "\#(String(repeating: "y", count: 3 << 20))"}"#
        let valid = "{\"version\": 1, \"frameworks\": [\n" + lines.joined(separator: ",\n") + "\n]}\n"
        let feed = try directory.write(Data(valid.utf8), to: "feed.json")
        let store = try await Store.open(at: directory.file("store.sqlite"))
        let report = try await store.sync(from: .file(URL(fileURLWithPath: feed)))
        #expect(report.status == .applied)
        #expect(try await store.frameworks.count() == 5000)
        #expect(try await store.frameworks.find("fw-4999")?.name == #"N "4999" é"#)
        #expect(try await store.frameworks.find("huge")?.description.count == 3 << 20)

        lines[4999] = #"{"id": "fw-4999", "name": "N", "imageName": "i", "urlString": "u", "description": "bad \x"}"#
        let broken = try directory.write(
            Data(("{\"version\": 1, \"frameworks\": [\n" + lines.joined(separator: ",\n") + "\n]}\n").utf8), to: "broken.json")
        await #expect {
            try await store.sync(from: .file(URL(fileURLWithPath: broken)))
        } throws: { error in
            "\(error)".contains("line 5001, column") && "\(error)".contains("invalid escape")
        }
        #expect(try await store.frameworks.find("fw-4999")?.name == #"N "4999" é"#)
        await store.close()
    }
}
