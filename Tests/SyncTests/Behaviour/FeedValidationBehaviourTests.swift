import Foundation
import Testing

@testable import Store

/// One invalid feed and what its error must say: each expected problem is a JSON path (empty
/// for the document) and a fragment of its message.
struct InvalidFeed: Sendable, CustomTestStringConvertible {
    let name: String
    let body: Data
    let expected: [(path: String, fragment: String)]
    /// The total problem count, when the case pins it.
    var total: Int?

    var testDescription: String { name }

    init(_ name: String, _ text: String, _ expected: [(String, String)], total: Int? = nil) {
        self.init(name, Data(text.utf8), expected, total: total)
    }

    init(_ name: String, _ body: Data, _ expected: [(String, String)], total: Int? = nil) {
        self.name = name
        self.body = body
        self.expected = expected.map { (path: $0.0, fragment: $0.1) }
        self.total = total
    }

    static let framework = #"{"id": "f", "name": "F", "imageName": "f", "urlString": "https://f.example", "description": "d"}"#
    static let item = #"{"itemName": "Milk", "price": 2.49, "aisle": 3}"#

    static func order(price: String) -> String {
        #"{"id": "o-1", "placedAt": "2026-11-20T09:30:00Z", "items": [{"itemName": "Milk", "price": \#(price), "aisle": 3}]}"#
    }

    static let all: [InvalidFeed] = [
        InvalidFeed(
            "truncated", #"{"version": 1, "frameworks": [\#(framework)"#,
            [("", "not valid JSON"), ("", "end of the document")], total: 1),
        InvalidFeed("trailing garbage", #"{"version": 1} {"version": 1}"#, [("", "after the end of the document")], total: 1),
        InvalidFeed(
            "lone surrogate", #"{"version": 1, "events": [{"id": "e", "title": "\ud800", "date": "2026-01-01"}]}"#,
            [("", "lone surrogate")], total: 1),
        InvalidFeed(
            "lone low surrogate", #"{"version": 1, "events": [{"id": "e", "title": "x\udc00y", "date": "2026-01-01"}]}"#,
            [("", "lone surrogate")], total: 1),
        InvalidFeed(
            "invalid UTF-8",
            Data(#"{"version": 1, "events": [{"id": "e", "title": ""#.utf8) + Data([0xC3, 0x28, 0xFF])
                + Data(#"", "date": "2026-01-01"}]}"#.utf8),
            [("", "invalid UTF-8")], total: 1),
        InvalidFeed(
            "raw NUL in a string",
            Data(#"{"version": 1, "events": [{"id": "e", "title": "a"#.utf8) + Data([0])
                + Data(#"b", "date": "2026-01-01"}]}"#.utf8),
            [("", "control character U+0000")], total: 1),
        InvalidFeed(
            "1e999 as a price", #"{"version": 1, "orders": [\#(order(price: "1e999"))]}"#,
            [("orders[0].items[0].price", "1e999 is too large: at most 10000000000.00")], total: 1),
        InvalidFeed(
            "price with 3 decimals", #"{"version": 1, "orders": [\#(order(price: "2.499"))]}"#,
            [("orders[0].items[0].price", "2.499")], total: 1),
        InvalidFeed(
            "negative price", #"{"version": 1, "orders": [\#(order(price: "-0.01"))]}"#,
            [("orders[0].items[0].price", "-0.01")], total: 1),
        InvalidFeed(
            "price as a string", #"{"version": 1, "orders": [\#(order(price: "\"2.49\""))]}"#,
            [("orders[0].items[0].price", "expected a number, found the string '2.49'")], total: 1),
        InvalidFeed(
            "duplicate keys",
            #"{"version": 1, "frameworks": [{"id": "a", "id": "b", "name": "F", "imageName": "f", "urlString": "u", "description": "d"}]}"#,
            [("frameworks[0]", "the member 'id' appears more than once")], total: 1),
        InvalidFeed(
            "duplicate version key", #"{"version": 1, "version": 1}"#,
            [("", "the member 'version' appears more than once")], total: 1),
        InvalidFeed(
            "nesting 100,000 levels deep",
            #"{"version": 1, "extra": "# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}",
            [("", "nesting is deeper than 256 levels")], total: 1),
        InvalidFeed("version 2", #"{"version": 2}"#, [("version", "must be 1, found the number 2")], total: 1),
        // A newer version is said as such, alone: it used to read "must be 1" (and a manifest of
        // version 3 was read as a version-1 page).
        InvalidFeed(
            "a manifest of a newer version",
            #"{"version": 3, "generation": "g", "head": 1, "snapshot": {"sequence": 1, "files": []}, "segments": []}"#,
            [("version", "is 3, a newer feed version than this client reads (feed versions 1 and 2)")], total: 1),
        InvalidFeed(
            "a page of a newer version whose records follow other rules",
            #"{"frameworks": [{"id": 7}], "version": 12345678901234567890123, "orders": {}}"#,
            [("version", "is 12345678901234567890123, a newer feed version")], total: 1),
        InvalidFeed("version 0", #"{"version": 0}"#, [("version", "must be 1, found the number 0")], total: 1),
        InvalidFeed("version \"1\"", #"{"version": "1"}"#, [("version", "must be 1, found the string '1'")], total: 1),
        InvalidFeed("version 1.0", #"{"version": 1.0}"#, [("version", "must be 1")], total: 1),
        InvalidFeed("version missing", #"{"frameworks": []}"#, [("version", "is required")], total: 1),
        // A kind's name misspelled: such a feed synced as empty ("applied", nothing changed).
        InvalidFeed(
            "a kind in the singular", #"{"version": 1, "framework": [{"id": "a"}]}"#,
            [("framework", "did you mean 'frameworks'?")], total: 1),
        InvalidFeed(
            "a kind's member in another case", #"{"version": 1, "Events": []}"#, [("Events", "did you mean 'events'?")],
            total: 1),
        InvalidFeed(
            "a tombstone kind misspelled", #"{"version": 1, "deleted": {"framework": ["a"]}}"#,
            [("deleted.framework", "did you mean 'frameworks'?")], total: 1),
        InvalidFeed(
            "duplicate id within a kind", #"{"version": 1, "frameworks": [\#(framework), \#(framework)]}"#,
            [("frameworks[1].id", "'f' is a duplicate: it already appears at")], total: 1),
        InvalidFeed(
            "same id in two kinds is fine, but not twice in events",
            #"{"version": 1, "frameworks": [\#(framework)], "events": [{"id": "f", "title": "t", "date": "2026-01-01"}, {"id": "f", "title": "t", "date": "2026-01-02"}]}"#,
            [("events[1].id", "duplicate")], total: 1),
        InvalidFeed(
            "missing fields",
            #"{"version": 1, "frameworks": [{"id": "f", "imageName": "f", "urlString": "u"}], "orders": [{"id": "o"}]}"#,
            [
                ("frameworks[0].name", "is required"), ("frameworks[0].description", "is required"),
                ("orders[0].placedAt", "is required"), ("orders[0].items", "is required"),
            ], total: 4),
        InvalidFeed(
            "wrong types",
            #"{"version": 1, "frameworks": {}, "orders": [{"id": 7, "placedAt": "2026-11-20T09:30:00Z", "items": [{"itemName": "Milk", "price": 1, "aisle": "3", "quantity": 0}]}], "events": [{"id": "e", "title": 5, "date": "2026-01-01", "notes": false}]}"#,
            [
                ("frameworks", "expected an array, found an object"), ("orders[0].id", "expected a string, found the number 7"),
                ("orders[0].items[0].aisle", "expected an integer, found the string '3'"),
                ("orders[0].items[0].quantity", "0 is not an integer of at least 1"),
                ("events[0].title", "expected a string, found the number 5"), ("events[0].notes", "expected a string"),
            ],
            total: 6),
        InvalidFeed(
            "non-existent date",
            #"{"version": 1, "events": [{"id": "e1", "title": "ok", "date": "2026-02-28"}, {"id": "e2", "title": "t", "date": "2026-02-30"}]}"#,
            [("events[1].date", "'2026-02-30' is not a calendar date")], total: 1),
        InvalidFeed(
            "not an RFC 3339 timestamp",
            #"{"version": 1, "orders": [{"id": "o", "placedAt": "2026-11-20 09:30", "items": [\#(item)]}]}"#,
            [("orders[0].placedAt", "is not an RFC 3339 timestamp")], total: 1),
        InvalidFeed(
            "RFC 3339 timestamps a Date cannot name: a leap second, a time before year 0001 once offset",
            #"{"version": 1, "orders": [{"id": "o", "placedAt": "2016-12-31T23:59:60Z", "items": [\#(item)]}, {"id": "p", "placedAt": "0001-01-01T00:00:00+00:01", "items": [\#(item)]}]}"#,
            [
                ("orders[0].placedAt", "names a leap second (second 60)"),
                ("orders[1].placedAt", "is outside years 0001 to 9999 once its offset is applied"),
            ], total: 2),
        InvalidFeed(
            "order without items", #"{"version": 1, "orders": [{"id": "o", "placedAt": "2026-11-20T09:30:00Z", "items": []}]}"#,
            [("orders[0].items", "at least one item")], total: 1),
        InvalidFeed(
            "id of 10,000 characters",
            #"{"version": 1, "frameworks": [{"id": "\#(String(repeating: "x", count: 10_000))", "name": "F", "imageName": "f", "urlString": "u", "description": "d"}]}"#,
            [("frameworks[0].id", "is 10000 characters long; at most 200 are allowed")], total: 1),
        InvalidFeed(
            "empty id", #"{"version": 1, "events": [{"id": "", "title": "t", "date": "2026-01-01"}]}"#,
            [("events[0].id", "must not be empty")], total: 1),
        InvalidFeed("empty body", "", [("", "the document is empty")], total: 1),
        InvalidFeed("only whitespace", " \n\t ", [("", "the document is empty")], total: 1),
        InvalidFeed("top-level array", #"[{"version": 1}]"#, [("", "the top level must be an object, found an array")], total: 1),
        InvalidFeed(
            "sent and deleted", #"{"version": 1, "frameworks": [\#(framework)], "deleted": {"frameworks": ["f"]}}"#,
            [("deleted.frameworks[0]", "a record cannot be both sent and deleted")], total: 1),
        InvalidFeed(
            "bad base64", #"{"version": 1, "images": [{"url": "https://example.com/a.png", "data": "!!!"}]}"#,
            [("images[0].data", "is not valid base64")], total: 1),
        // Strict base64: characters outside the alphabet were dropped (`.ignoreUnknownCharacters`),
        // so "@@@!" and "" stored a 0-byte image and "iVBO!!Rw0KGgo=" other bytes.
        InvalidFeed(
            "base64 with characters outside the alphabet",
            #"{"version": 1, "images": [{"url": "https://example.com/a.png", "data": "iVBO!!Rw0KGgo="}]}"#,
            [
                ("images[0].data", "'!' at character 5 is not in the standard alphabet"),
                ("images[0].data", "https://example.com/a.png"),
            ],
            total: 1),
        InvalidFeed(
            "base64 of nothing but unknown characters",
            #"{"version": 1, "images": [{"url": "https://example.com/a.png", "data": "@@@!"}]}"#,
            [("images[0].data", "'@' at character 1")], total: 1),
        InvalidFeed(
            "empty image data", #"{"version": 1, "images": [{"url": "img/a.png", "data": ""}]}"#,
            [("images[0].data", "is empty: an image has at least one byte"), ("images[0].data", "img/a.png")], total: 1),
        InvalidFeed(
            "URL-safe base64", #"{"version": 1, "images": [{"url": "https://example.com/a.png", "data": "a-_b"}]}"#,
            [("images[0].data", "'-' at character 2")], total: 1),
        InvalidFeed(
            "base64 with a space", #"{"version": 1, "images": [{"url": "https://example.com/a.png", "data": "QU JD"}]}"#,
            [("images[0].data", "U+0020 at character 3")], total: 1),
        InvalidFeed(
            "unpadded base64", #"{"version": 1, "images": [{"url": "https://example.com/a.png", "data": "QUI"}]}"#,
            [("images[0].data", "not a multiple of 4")], total: 1),
        InvalidFeed(
            "base64 going on after its padding",
            #"{"version": 1, "images": [{"url": "https://example.com/a.png", "data": "QQ==QUJD"}]}"#,
            [("images[0].data", "character 5 follows '=' padding")], total: 1),
        InvalidFeed(
            "image with another scheme", #"{"version": 1, "images": [{"url": "ftp://example.com/a.png"}]}"#,
            [("images[0].url", "must be an http(s) URL or relative to the feed")], total: 1),
        InvalidFeed(
            "several problems in one feed",
            #"{"version": 1, "frameworks": [{"id": "f", "imageName": "f", "urlString": "u", "description": "d"}], "orders": [\#(order(price: "0.125"))], "events": [{"id": "e1", "title": "ok", "date": "2026-03-01"}, {"id": "e2", "title": "t", "date": "2026-13-01"}]}"#,
            [("frameworks[0].name", "is required"), ("orders[0].items[0].price", "0.125"), ("events[1].date", "2026-13-01")],
            total: 3),
        // Values a tree would be built of, past what one value may hold (a million): refused
        // while the tree is small. A 48 MB page of `{}`s took more than 4 GB.
        InvalidFeed(
            "a record of more than a million values",
            #"{"version": 1, "orders": [{"id": "o", "placedAt": "2026-11-20T09:30:00Z", "items": [\#(repeated("{}", 1_000_000))]}]}"#,
            [("orders[0]", "holds more than 1000000 JSON values (reached in its member 'items')")], total: 1),
        InvalidFeed(
            "a record of more than a million members",
            #"{"version": 1, "frameworks": [{"id": "f", \#(numberedMembers(1_000_001))}]}"#,
            [("frameworks[0]", "holds more than 1000000 JSON values (reached in its member 'm999999')")], total: 1),
        InvalidFeed(
            "a version of more than a million values", #"{"version": [\#(repeated("0", 1_000_001))]}"#,
            [("version", "holds more than 1000000 JSON values")], total: 1),
        InvalidFeed(
            "a top level of a million objects", "[\(repeated("{}", 1_000_001))]",
            [("", "the top level must be an object, found an array")], total: 1),
        InvalidFeed(
            "a kind's member of a million values, not an array",
            #"{"version": 1, "events": {"a": [\#(repeated("{}", 1_000_001))]}}"#,
            [("events", "expected an array, found an object")], total: 1),
        InvalidFeed(
            "an order of more items than an order may hold",
            #"{"version": 1, "orders": [{"id": "o", "placedAt": "2026-11-20T09:30:00Z", "items": [\#(repeated(item, 100_001))]}]}"#,
            [("orders[0].items", "holds 100001 items, more than an order may hold (100000)")], total: 1),
        InvalidFeed(
            "deleted keys that are not strings",
            #"{"version": 1, "deleted": {"frameworks": ["ok", 1, {"a": [2]}, null, true, [\#(repeated("{}", 1_000_001))]]}}"#,
            [
                ("deleted.frameworks[1]", "expected a string (id), found a number"),
                ("deleted.frameworks[2]", "expected a string (id), found an object"),
                ("deleted.frameworks[3]", "expected a string (id), found null"),
                ("deleted.frameworks[4]", "expected a string (id), found a boolean"),
                ("deleted.frameworks[5]", "expected a string (id), found an array"),
            ], total: 5),
        InvalidFeed(
            "deleted of the wrong shapes",
            #"{"version": 1, "deleted": {"events": {"a": 1}, "orders": null, "frameworks": [], "frameworks": 3}}"#,
            [
                ("deleted.events", "expected an array, found an object"),
                ("deleted", "the member 'frameworks' appears more than once"),
            ], total: 2),
        InvalidFeed(
            "deleted not an object", #"{"version": 1, "deleted": [\#(repeated("{}", 1_000_001))]}"#,
            [("deleted", "expected an object of arrays per kind, found an array")], total: 1),
    ]

    /// `"m0": 0, "m1": 0, ...`: `count` members.
    static func numberedMembers(_ count: Int) -> String {
        (0..<count).map { #""m\#($0)": 0"# }.joined(separator: ",")
    }

    /// `text` `count` times, comma-separated.
    static func repeated(_ text: String, _ count: Int) -> String {
        Array(repeating: text, count: count).joined(separator: ",")
    }
}

/// Feeds are validated record by record as they are applied, inside one transaction that an
/// invalid feed rolls back: every problem names the page and the JSON path, and an invalid feed
/// leaves the store as it was, even when its problem comes after thousands of valid records.
@Suite(.timeLimit(.minutes(10)))
struct FeedValidationBehaviourTests {
    /// A valid feed of every kind, synced first so the store and its sync state are not empty.
    static let base = behaviourFeed(
        frameworks: [KindFixture.framework.json("fw", 1)], orders: [KindFixture.order.json("or", 1)],
        events: [KindFixture.event.json("ev", 1)],
        images: [imageJSON("https://example.com/i.png", data: Data([1, 2, 3]), contentType: "image/png")])

    @Test(arguments: InvalidFeed.all)
    func invalidFeedIsRefusedAndTheStoreIsUnchanged(_ invalid: InvalidFeed) async throws {
        try await withBehaviourStore { store, folder in
            let base = try folder.write("base.json", Self.base)
            _ = try await store.sync(from: base)
            let before = try await store.exportFeed()
            let historyBefore = try await store.syncHistory()

            let source = try folder.write("feed.json", invalid.body)
            let error = await behaviourError { try await store.sync(from: source, options: SyncOptions(policy: .preferRemote)) }

            let validation = try #require(error as? FeedValidationError, "\(String(describing: error))")
            for (path, fragment) in invalid.expected {
                #expect(
                    validation.problems.contains { $0.path == path && $0.message.contains(fragment) },
                    "no problem at '\(path)' containing '\(fragment)' in:\n\(validation)")
            }
            if let total = invalid.total {
                #expect(validation.totalCount == total, "\(validation)")
                #expect(validation.problems.count == total)
            }
            // Every problem names the file it was found in.
            #expect(validation.problems.allSatisfy { $0.source == source.url.path })
            for (path, _) in invalid.expected where !path.isEmpty {
                #expect(validation.description.contains("\(source.url.path): \(path): "))
            }
            // Nothing was written; the failure is in the history.
            #expect(try await store.exportFeed() == before)
            let history = try await store.syncHistory()
            #expect(history.count == historyBefore.count + 1)
            #expect(history.first?.outcome == .failed)
            #expect(history.first?.source == source.url.path)
            #expect(history.first?.error == validation.description)
        }
    }

    @Test func unknownFieldsAreIgnored() async throws {
        try await withBehaviourStore { store, folder in
            let source = try folder.write(
                "feed.json",
                #"""
                {"version": 1, "generator": {"name": "future", "flags": [1, 2, {"deep": null}]},
                 "frameworks": [{"id": "f", "name": "F", "imageName": "f", "urlString": "u", "description": "d", "color": "red"}],
                 "orders": [{"id": "o", "placedAt": "2026-11-20T09:30:00Z", "currency": "EUR",
                             "items": [{"itemName": "Milk", "price": 2.49, "aisle": 3, "organic": true}]}],
                 "events": [{"id": "e", "title": "t", "date": "2026-06-08", "allDay": true}],
                 "deleted": {"frameworks": [], "widgets": ["w"]},
                 "playlists": [{"id": "p"}]}
                """#)
            let report = try await store.sync(from: source)
            #expect(report.frameworks == counts(inserted: 1))
            #expect(report.orders == counts(inserted: 1))
            #expect(report.events == counts(inserted: 1))
            #expect(
                try await store.frameworks.find("f")
                    == Framework(id: "f", name: "F", imageName: "f", urlString: "u", description: "d"))
            #expect(try await store.orders.total("o") == Money(minorUnits: 249))
            #expect(try await store.events.find("e")?.date == CalendarDate("2026-06-08"))
        }
    }

    /// null is absent for every optional member: it was for `notes`, `contentType`, `data`,
    /// `deleted` and `next`, and refused for `quantity` and a kind's array.
    @Test func nullIsAbsentForEveryOptionalMember() async throws {
        try await withBehaviourStore { store, folder in
            let source = try folder.write(
                "feed.json",
                #"""
                {"version": 1, "frameworks": null, "images": null,
                 "orders": [{"id": "o", "placedAt": "2026-11-20T09:30:00Z",
                             "items": [{"itemName": "Milk", "price": 2.49, "aisle": 3, "quantity": null}]}],
                 "events": [{"id": "e", "title": "t", "date": "2026-06-08", "notes": null}],
                 "deleted": {"frameworks": null, "events": []}, "next": null}
                """#)
            let report = try await store.sync(from: source)
            #expect(report.orders == counts(inserted: 1))
            #expect(report.events == counts(inserted: 1))
            #expect(try await store.orders.find("o")?.items.first?.quantity == 1)
            #expect(try await store.events.find("e")?.notes == nil)
        }
    }

    /// An ignored member is read as strictly as any (malformed JSON inside it fails the page),
    /// without being built: an 80 MB one took 850 MB and half a minute that no cancellation
    /// could interrupt (the cancellation review).
    @Test func unknownMembersAreReadStrictlyWithoutBuildingThem() async throws {
        try await withBehaviourStore { store, folder in
            let malformed = try folder.write("bad.json", #"{"version": 1, "zzz": [1, {"a": [2,, 3]}], "frameworks": []}"#)
            let error = await behaviourError { try await store.sync(from: malformed) }
            #expect(String(describing: error).contains("not valid JSON"), "\(String(describing: error))")
        }
        for text in [#"[1, {"a": [2, "x", null, true]}, -0.5e3]"#, #"{"a": {"b": {}}, "c": []}"#, #""s""#, "12"] {
            var checks = 0
            try JSONParser.read(Data(text.utf8)) { try $0.readAndDiscardValue { checks += 1 } }
            #expect(checks == 0, "\(text)")
        }
        // The stop is looked at as the elements go by: every 1,024 values.
        let big = Data(("[" + Array(repeating: "0", count: 5_000).joined(separator: ",") + "]").utf8)
        var checks = 0
        try JSONParser.read(big) { try $0.readAndDiscardValue { checks += 1 } }
        #expect(checks == 4)
        struct Stop: Error {}
        #expect(throws: Stop.self) { try JSONParser.read(big) { try $0.readAndDiscardValue { throw Stop() } } }
    }

    @Test func duplicateIDsAcrossPagesAreRefused() async throws {
        try await withBehaviourStore { store, folder in
            let before = try await store.exportFeed()
            let first = try folder.write(
                "feed.json", behaviourFeed(events: [KindFixture.event.json("e-1", 1)], next: "page-2.json"))
            try folder.write(
                "page-2.json",
                behaviourFeed(
                    frameworks: [KindFixture.framework.json("e-1", 1)],
                    events: [KindFixture.event.json("e-2", 1), KindFixture.event.json("e-1", 2)]))

            let error = await behaviourError { try await store.sync(from: first) }

            let validation = try #require(error as? FeedValidationError)
            #expect(validation.totalCount == 1, "\(validation)")
            let problem = try #require(validation.problems.first)
            #expect(problem.source == folder.file("page-2.json").path)
            #expect(problem.path == "events[1].id")
            #expect(problem.message.contains("already appears at \(first.url.path): events[0].id"))
            #expect(try await store.exportFeed() == before)
            #expect(try await store.events.count() == 0)
        }
    }

    /// Keys are compared as SQLite compares them, byte for byte: "é" (U+00E9) and "e" + U+0301
    /// are two records (Swift's `==` would call them equal), while a byte-identical repeat is a
    /// duplicate.
    @Test func canonicallyEquivalentIDsAreDistinctKeys() async throws {
        try await withBehaviourStore { store, folder in
            let source = try folder.write(
                "feed.json",
                behaviourFeed(
                    events: [KindFixture.event.json("\u{E9}", 1), KindFixture.event.json("e\u{301}", 2)],
                    deleted: [.framework: ["\u{C5}", "A\u{30A}"]]))
            let report = try await store.sync(from: source)
            #expect(report.events == counts(inserted: 2))
            let ids = try await store.events.fetchAll().map { Array($0.id.utf8) }
            #expect(Set(ids) == [Array("\u{E9}".utf8), Array("e\u{301}".utf8)])

            try folder.write(
                "dup.json", behaviourFeed(events: [KindFixture.event.json("e\u{301}", 1), KindFixture.event.json("e\u{301}", 2)]))
            let error = await behaviourError { try await store.sync(from: .file(folder.file("dup.json"))) }
            let validation = try #require(error as? FeedValidationError)
            #expect(validation.problems.map(\.path) == ["events[1].id"])
        }
    }

    @Test func nextThatLoopsBackIsRefused() async throws {
        try await withBehaviourStore { store, folder in
            let first = try folder.write(
                "feed.json", behaviourFeed(events: [KindFixture.event.json("e-1", 1)], next: "page-2.json"))
            try folder.write("page-2.json", behaviourFeed(events: [KindFixture.event.json("e-2", 1)], next: "./feed.json"))
            let before = try await store.exportFeed()

            let error = await behaviourError { try await store.sync(from: first) }

            let validation = try #require(error as? FeedValidationError)
            #expect(
                validation.problems == [
                    FeedProblem(
                        source: folder.file("page-2.json").path, path: "next", message: "'./feed.json' loops back to page 1")
                ])
            #expect(try await store.exportFeed() == before)
        }
    }

    /// `maximumPages` pages are followed; one more is refused at the last page's `next`, with
    /// nothing applied. (No test set the limit: one page more, or no limit, went unnoticed.)
    @Test func aFeedOfMorePagesThanTheLimitIsRefused() async throws {
        try await withBehaviourStore { store, folder in
            var options = SyncOptions()
            options.maximumPages = 3
            for page in 1...4 {
                try folder.write(
                    "page-\(page).json",
                    behaviourFeed(
                        events: [KindFixture.event.json("e-\(page)", 1)], next: page < 4 ? "page-\(page + 1).json" : nil))
            }
            // Three pages, the limit: each is applied.
            try folder.write("three.json", behaviourFeed(events: [KindFixture.event.json("e-0", 1)], next: "page-2.json"))
            try folder.write(
                "page-3.json", behaviourFeed(events: [KindFixture.event.json("e-3", 1)]))
            let report = try await store.sync(from: .file(folder.file("three.json")), options: options)
            #expect(report.events == counts(inserted: 3))
            let before = try await store.exportFeed()

            // Four pages: refused where the fourth is named, the store unchanged.
            try folder.write(
                "page-3.json", behaviourFeed(events: [KindFixture.event.json("e-3", 1)], next: "page-4.json"))
            let error = await behaviourError {
                try await store.sync(from: .file(folder.file("page-1.json")), options: options)
            }
            let validation = try #require(error as? FeedValidationError, "\(String(describing: error))")
            #expect(
                validation.problems == [
                    FeedProblem(source: folder.file("page-3.json").path, path: "next", message: "the feed has more than 3 pages")
                ])
            #expect(try await store.exportFeed() == before)
            #expect(try await store.events.count() == 3)
        }
    }

    @Test func aLocalFeedCannotLeaveItsFiles() async throws {
        try await withBehaviourStore { store, folder in
            let source = try folder.write("feed.json", behaviourFeed(next: "http://127.0.0.1:9/feed.json"))
            let error = await behaviourError { try await store.sync(from: source) }
            let validation = try #require(error as? FeedValidationError)
            #expect(validation.problems.map(\.path) == ["next"])
            #expect(validation.problems.first?.message.contains("refused") == true)
        }
    }

    @Test func pagesAreAllOrNothing() async throws {
        try await withBehaviourStore { store, folder in
            let first = try folder.write(
                "feed.json",
                behaviourFeed(
                    frameworks: [KindFixture.framework.json("f", 1)], events: [KindFixture.event.json("e-1", 1)],
                    next: "page-2.json"))
            try folder.write("page-2.json", #"{"version": 1, "events": [{"id": "e-2", "title": "t", "date": "2026-02-29"}]}"#)
            let error = await behaviourError { try await store.sync(from: first) }
            let validation = try #require(error as? FeedValidationError)
            #expect(validation.problems.map(\.path) == ["events[0].date"])
            #expect(validation.problems.map(\.source) == [folder.file("page-2.json").path])
            #expect(try await store.frameworks.count() == 0)
            #expect(try await store.events.count() == 0)
        }
    }

    /// Records read before a late problem were already applied inside the transaction: they
    /// must all be rolled back, sync state and change log included.
    @Test(arguments: [
        ("a duplicate id at the end", #"{"id": "fw-0", "name": "n", "imageName": "i", "urlString": "u", "description": "d"}]}"#),
        ("a truncated document", #"{"id": "fw-late", "name": "n", "imageName": "i", "urlString": "u", "desc"#),
        (
            "a version that comes last and is wrong",
            #"{"id": "fw-late", "name": "n", "imageName": "i", "urlString": "u", "description": "d"}], "version": 2}"#
        ),
    ])
    func aLateProblemRollsBackEveryRecordAppliedBeforeIt(_ name: String, _ tail: String) async throws {
        try await withBehaviourStore { store, folder in
            _ = try await store.sync(from: try folder.write("base.json", Self.base))
            let before = try await store.exportFeed()
            let state = { @Sendable (db: Database) throws -> [String] in
                try db.query(
                    "SELECT s.source || ' ' || t.kind || ' ' || r.key || ' ' || r.hash FROM sync_records AS r JOIN sync_streams AS t ON t.id = r.stream JOIN sync_sources AS s ON s.id = t.source_id ORDER BY 1"
                ) { $0.text(0) }
                    + db.query("SELECT 'log ' || count(*) FROM change_log") { $0.text(0) }
            }
            let stateBefore = try await store.read(state)

            var text = #"{"frameworks": ["#
            for index in 0..<2_000 {
                text += #"{"id": "fw-\#(index)", "name": "n", "imageName": "i", "urlString": "u", "description": "d"},"#
            }
            text += tail
            if !tail.contains(#""version""#) && !tail.hasSuffix("desc") {
                text = text.replacingOccurrences(of: "]}", with: #"], "version": 1}"#)
            }
            let source = try folder.write("feed.json", text)
            let error = await behaviourError { try await store.sync(from: source) }

            #expect(error is FeedValidationError, "\(name): \(String(describing: error))")
            #expect(try await store.exportFeed() == before, "\(name)")
            #expect(try await store.read(state) == stateBefore, "\(name)")
            #expect(try await store.frameworks.count() == 1, "\(name)")
        }
    }

    @Test func problemListIsCappedButCounted() async throws {
        try await withBehaviourStore { store, folder in
            let events = (0..<150).map {
                JSONValue.object(["id": .string("e\($0)"), "title": .string("t"), "date": .string("2026-02-30")])
            }
            let source = try folder.write("feed.json", behaviourFeed(events: events))
            let error = await behaviourError { try await store.sync(from: source) }
            let validation = try #require(error as? FeedValidationError)
            #expect(validation.totalCount == 150)
            #expect(validation.problems.count == FeedValidator.maximumProblems)
            #expect(validation.problems.last?.path == "events[99].date")
            #expect(validation.description.contains("... and 50 more problems"))
            #expect(try await store.events.count() == 0)
        }
    }

    /// A record keeps the text of its first hundred problems only (all the list shows), but
    /// every one counts, its items' included, and so do the problems of the records after it.
    @Test func problemsOfOneRecordPastTheListAreCounted() async throws {
        try await withBehaviourStore { store, folder in
            let items = Array(repeating: "{}", count: 150).joined(separator: ",")
            let text = #"""
                {"version": 1, "orders": [{"id": "o", "placedAt": "2026-11-20T09:30:00Z", "items": [\#(items)]}],
                 "events": [{"id": "e", "title": "t", "date": "2026-02-30"}]}
                """#
            let source = try folder.write("feed.json", text)
            let error = await behaviourError { try await store.sync(from: source) }
            let validation = try #require(error as? FeedValidationError)
            // Three a item (itemName, price, aisle), then the event's date.
            #expect(validation.totalCount == 451)
            #expect(validation.problems.count == FeedValidator.maximumProblems)
            #expect(validation.problems.first?.path == "orders[0].items[0].itemName")
            #expect(validation.problems.last?.path == "orders[0].items[33].itemName")
            #expect(validation.description.contains("... and 351 more problems"))
            #expect(try await store.orders.count() == 0)
        }
    }

    // MARK: The parser and the validator directly

    /// A tree is built of at most `maximumValues` values (every scalar, array and object in it),
    /// and the error says where the value over the limit starts.
    @Test func aTreeIsBuiltOfAtMostTheLimitsValues() throws {
        let text = Data("[1, [2], {\"a\": 3}]".utf8) // 6 values
        #expect(
            try JSONParser.parse(text, maximumValues: 6)
                == .array([.integer(1), .array([.integer(2)]), .object(["a": .integer(3)])]))
        #expect(throws: JSONValueLimitError(limit: 5, offset: 15)) { try JSONParser.parse(text, maximumValues: 5) }
        #expect(throws: JSONValueLimitError(limit: 1, offset: 1)) { try JSONParser.parse(text, maximumValues: 1) }
        // Members read one by one share one allowance.
        func members(allowance: Int) throws -> Int {
            var left = allowance
            try JSONParser.read(Data(#"{"a": [1, 2], "b": [3]}"#.utf8)) { parser in
                try parser.forEachMember { _, parser in _ = try parser.readValue(allowance: &left) }
            }
            return left
        }
        #expect(try members(allowance: 5) == 0)
        #expect(throws: JSONValueLimitError.self) { try members(allowance: 4) }
        // Each readValue has the whole limit.
        try JSONParser.read(Data(#"[[1, 2], [3, 4]]"#.utf8), maximumValues: 3) { parser in
            try parser.forEachElement { _, parser in _ = try parser.readValue() }
        }
    }

    /// An object takes the room of its members, no more: an order's item of 4 took room for 8
    /// (352 bytes), and `{}` took as much.
    @Test func anObjectIsBuiltAtItsSize() throws {
        let value = try JSONParser.parse(Data(#"[{}, {"a": 1, "b": 2, "c": 3, "d": 4}, {"e": {"f": [{"g": 5}]}}]"#.utf8))
        guard case .array(let elements) = value, elements.count == 3, case .object(let empty) = elements[0],
            case .object(let four) = elements[1], case .object(let nested) = elements[2]
        else {
            Issue.record("\(value)")
            return
        }
        #expect(empty.capacity == 0)
        #expect(four.count == 4 && four.capacity < 8)
        #expect(four.map(\.key) == ["a", "b", "c", "d"])
        #expect(nested.capacity == 1)
        #expect(value["x"] == nil && elements[2]["e"]?["f"] == .array([.object(["g": .integer(5)])]))
    }

    /// A page's `deleted` keys are read one by one, not as a tree, so no limit on values caps
    /// how many a page deletes; a record one value over the limit is refused, one at it is not.
    @Test func deletedKeysAreNotLimitedButRecordsAre() throws {
        let keys = (0..<50).map { "\"k\($0)\"" }.joined(separator: ", ")
        // 5 values of its own, and 5 more in `extra` (the array and 4 numbers): 10.
        let atLimit = #"{"id": "f", "name": "F", "imageName": "f", "urlString": "u", "description": "d", "extra": [1, 2, 3, 4]}"#
        var validator = FeedValidator(maximumValues: 10)
        var collector = FeedCollector()
        let page = URL(fileURLWithPath: "/tmp/feed.json")
        try validator.add(
            Data(#"{"version": 1, "deleted": {"events": [\#(keys)]}, "frameworks": [\#(atLimit)]}"#.utf8), source: page.path,
            pageURL: page, into: &collector)
        try validator.finish()
        #expect(collector.feed.deleted[.event].count == 50)
        #expect(collector.feed.frameworks.map(\.id) == ["f"])

        var refusing = FeedValidator(maximumValues: 10)
        let overLimit = atLimit.replacingOccurrences(of: "[1, 2, 3, 4]", with: "[1, 2, 3, 4, 5]")
        try refusing.add(
            Data(#"{"version": 1, "frameworks": [\#(overLimit)]}"#.utf8), source: page.path, pageURL: page,
            into: &collector)
        do {
            try refusing.finish()
            Issue.record("a record of 11 values was accepted")
        } catch let error as FeedValidationError {
            #expect(error.problems.map(\.path) == ["frameworks[0]"])
            #expect(
                error.problems.first?.message.contains("holds more than 10 JSON values (reached in its member 'extra')") == true)
        }
    }

    @Test func deepNestingIsAnErrorNotACrash() throws {
        for depth in [257, 100_000] {
            let text = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            #expect(throws: JSONParseError.self) { try JSONParser.parse(Data(text.utf8)) }
            let objects = String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)
            do {
                _ = try JSONParser.parse(Data(objects.utf8))
                Issue.record("\(depth) nested objects parsed")
            } catch let error as JSONParseError {
                #expect(error.message == "nesting is deeper than 256 levels")
                #expect(error.line == 1)
                #expect(error.offset == 256 * 5) // at the 257th '{'
            }
        }
        // 256 levels are fine.
        let ok = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(throws: Never.self) { try JSONParser.parse(Data(ok.utf8)) }
    }

    @Test func parseErrorsSayWhere() throws {
        let cases: [(String, Int, Int, String)] = [
            ("{\n  \"version\": 1,\n  \"x\": tru\n}", 3, 8, "expected a value"),
            ("{\"version\": 1}\n  garbage", 2, 3, "after the end of the document"),
            ("{\"a\": \"\\ud800\"}", 1, 14, "lone surrogate \\uD800"),
            ("{\"a\": 01}", 1, 8, "leading zero"),
        ]
        for (text, line, column, fragment) in cases {
            do {
                _ = try JSONParser.parse(Data(text.utf8))
                Issue.record("parsed: \(text)")
            } catch let error as JSONParseError {
                #expect((error.line, error.column) == (line, column), "\(text.debugDescription): \(error)")
                #expect(error.message.contains(fragment), "\(error)")
            }
        }
    }

    @Test func numbersKeepTheirTextSo1e999IsTheValidatorsCall() throws {
        let value = try JSONParser.parse(Data(#"{"price": 1e999, "small": 0.1}"#.utf8))
        #expect(value["price"] == .number("1e999"))
        #expect(value["small"] == .number("0.1"))
        #expect(Money("1e999") == nil)
        #expect(Money("0.1")! + Money("0.2")! == Money("0.30")!)
    }

    /// Sync learns each page's `next` from a quick scan before reading the page for real: it
    /// must find the top-level member only, wherever it is, and never one nested deeper.
    @Test func theQuickScanFindsOnlyTheTopLevelNext() throws {
        func next(_ text: String) -> JSONValue? { JSONParser.topLevelMember("next", in: Data(text.utf8)) }
        #expect(next(#"{"version": 1, "next": "p2.json"}"#) == .string("p2.json"))
        #expect(next(#"{"next": "a\"b\u00e9.json", "version": 1}"#) == .string("a\"bé.json"))
        #expect(
            next(#"{"frameworks": [{"next": "nested.json", "id": "x\"next\""}], "notes": "\"next\": \"no\"", "next": null}"#)
                == .null)
        #expect(next(#"{"deleted": {"next": "nested.json"}, "version": 1}"#) == nil)
        #expect(next(#"["next", "p2.json"]"#) == nil)
        #expect(next(#"{"next": 3}"#) == .number("3"))
        #expect(next(#"{"version": 1, "frameworks": [{"id": "unclosed}"#) == nil)
        #expect(next("\u{FEFF}" + #"{"next": "bom.json"}"#) == .string("bom.json"))
    }

    /// Plain frameworks take a fast path that skips the JSON tree; every other shape must
    /// still decode, or be refused, exactly as the general path does.
    @Test func theFrameworkFastPathAgreesWithTheGeneralPath() throws {
        let plain = #"{"id": "a", "name": "A", "imageName": "a", "urlString": "u", "description": "d"}"#
        let reordered = #"{"description": "d", "urlString": "u", "imageName": "b", "name": "B", "id": "b"}"#
        let extra = #"{"id": "c", "name": "C", "imageName": "c", "urlString": "u", "description": "d", "color": "red"}"#
        let escaped = #"{"id": "d\u00e9", "name": "D \"quoted\"", "imageName": "d", "urlString": "u", "description": "d"}"#
        let feed = try Feed.decode(
            Data(#"{"version": 1, "frameworks": [\#(plain), \#(reordered), \#(extra), \#(escaped)]}"#.utf8))
        #expect(feed.frameworks.map(\.id) == ["a", "b", "c", "dé"])
        #expect(feed.frameworks[1] == Framework(id: "b", name: "B", imageName: "b", urlString: "u", description: "d"))
        #expect(feed.frameworks[3].name == #"D "quoted""#)

        let refused: [(String, String, String)] = [
            (
                #"{"id": "z", "name": "A", "name": "B", "imageName": "a", "urlString": "u", "description": "d"}"#,
                "frameworks[1]", "more than once"
            ),
            (
                #"{"id": "x", "name": 1, "imageName": "a", "urlString": "u", "description": "d"}"#, "frameworks[1].name",
                "expected a string"
            ),
            (
                #"{"id": "", "name": "A", "imageName": "a", "urlString": "u", "description": "d"}"#, "frameworks[1].id",
                "must not be empty"
            ),
            (plain, "frameworks[1].id", "is a duplicate: it already appears at feed: frameworks[0].id"),
            (#"{"id": "y", "name": "A", "imageName": "a", "urlString": "u"}"#, "frameworks[1].description", "is required"),
        ]
        for (second, path, message) in refused {
            let text = #"{"version": 1, "frameworks": [\#(plain), \#(second)]}"#
            #expect(throws: FeedValidationError.self, "\(second)") { try Feed.decode(Data(text.utf8)) }
            do {
                _ = try Feed.decode(Data(text.utf8))
            } catch let error as FeedValidationError {
                #expect(error.problems.count == 1, "\(error)")
                #expect(error.problems.first?.path == path, "\(error)")
                #expect(error.problems.first?.message.contains(message) == true, "\(error)")
            }
        }
    }

    @Test func duplicateKeysAreKeptForTheValidator() throws {
        let value = try JSONParser.parse(Data(#"{"a": 1, "a": 2}"#.utf8))
        #expect(value == .object([JSONMember("a", .number("1")), JSONMember("a", .number("2"))]))
    }

    /// Tools wrap base64 at 76 characters: CR and LF are skipped, nothing else.
    @Test func imageDataMayBeWrapped() async throws {
        try await withBehaviourStore { store, folder in
            let source = try folder.write(
                "feed.json",
                #"{"version": 1, "images": [{"url": "https://example.com/a.png", "data": "QUJD\r\nREVG\nRw==\n"}]}"#)
            _ = try await store.sync(from: source)
            #expect(try await store.images.get("https://example.com/a.png")?.data == Data("ABCDEFG".utf8))
        }
    }

    @Test func aRemotePageCannotNameAFileImage() throws {
        var validator = FeedValidator()
        var collector = FeedCollector()
        let page = Data(
            #"""
            {"version": 1, "images": [{"url": "file:///etc/passwd"}, {"url": "img/a.png"}, {"url": "https://cdn.example/b.png"}],
             "deleted": {"images": ["file:///etc/hosts"]}}
            """#.utf8)
        try validator.add(
            page, source: "https://feeds.example/v1/feed.json", pageURL: URL(string: "https://feeds.example/v1/feed.json")!,
            into: &collector)
        #expect(throws: FeedValidationError.self) { try validator.finish() }
        do {
            try validator.finish()
        } catch let error as FeedValidationError {
            #expect(error.problems.map(\.path) == ["images[0].url", "deleted.images[0]"])
            #expect(error.problems.allSatisfy { $0.message.contains("must be an http(s) URL") })
            #expect(error.problems.allSatisfy { $0.source == "https://feeds.example/v1/feed.json" })
        }
        // Once a problem is found, no record reaches the sink: the sync applying them rolls back.
        #expect(collector.feed.images.isEmpty)
    }

    @Test func relativeImageURLsResolveAgainstTheirPage() throws {
        var validator = FeedValidator()
        var collector = FeedCollector()
        let page = Data(#"{"version": 1, "images": [{"url": "img/a.png"}, {"url": "https://cdn.example/b.png"}]}"#.utf8)
        try validator.add(
            page, source: "https://feeds.example/v1/feed.json", pageURL: URL(string: "https://feeds.example/v1/feed.json")!,
            into: &collector)
        try validator.finish()
        #expect(collector.feed.images.map(\.url) == ["https://feeds.example/v1/img/a.png", "https://cdn.example/b.png"])
    }

    @Test func aLocalPageMayNameRelativeFilesButNotAbsoluteOnes() throws {
        var validator = FeedValidator()
        var collector = FeedCollector()
        let page = URL(fileURLWithPath: "/tmp/feeds/feed.json")
        try validator.add(
            Data(#"{"version": 1, "images": [{"url": "img/a.png"}, {"url": "file:///etc/passwd"}]}"#.utf8),
            source: page.path, pageURL: page, into: &collector)
        #expect(validator.hasProblems)
        #expect(collector.feed.images.map(\.url) == ["img/a.png"])
        #expect(collector.feed.images.first?.location == URL(fileURLWithPath: "/tmp/feeds/img/a.png"))
    }
}
