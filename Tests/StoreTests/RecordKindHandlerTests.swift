import Foundation
import Testing

@testable import Store

/// The built-in kinds go through the same kind abstraction as an app's: listed once, in the
/// feed's order, each observed through its own tables, and frameworks and events readable through
/// the generic `StoreRecord` API as well as through their own tables.
@Suite("Record kinds: one list, one path")
struct RecordKindHandlerTests {
    @Test func theBuiltInKindsAreListedOnceInTheFeedsOrderAndAppKindsFollow() {
        #expect(RecordKinds.builtIn.map(\.kind) == RecordKind.allCases)
        #expect(RecordKinds.handlers(registering: [Note.self]).map(\.kind) == RecordKind.allCases + [Note.kind])
        let tables = ObservedKindTable.all(registering: [Note.self]).map { "\($0.kind):\($0.observed.table)" }
        #expect(
            tables == [
                "framework:frameworks", "order:orders", "order:order_items", "event:events", "image:images", "note:notes",
            ])
    }

    @Test func frameworksAndEventsAreStoreRecordsToo() async throws {
        try await withTemporaryStore { store, _ in
            let framework = Framework(id: "arkit", name: "ARKit", imageName: "arkit", urlString: "u", description: "AR")
            let event = Event(id: "e", title: "Launch", date: CalendarDate("2026-03-01")!, notes: nil)
            try await store.write { db in
                try db.records(Framework.self).insert(framework)
                try db.records(Event.self).insert(event)
            }
            #expect(try await store.frameworks.fetchAll() == [framework])
            #expect(try await store.events.find("e") == event)
            #expect(try await store.read { try $0.records(Event.self).fetchAll() } == [event])
            #expect(try await store.read { try $0.records(Framework.self).find("arkit") } == framework)
            // The feed shape is the export's.
            let exported = try Feed.decode(Data(try await store.exportFeed().utf8))
            #expect(exported.frameworks.map(\.feedValue) == [framework.feedValue])
            #expect(exported.events == [event])
        }
    }

    @Test func problemsOfEveryKindAreNamedByTheirJSONPaths() throws {
        let text = """
            {"version": 1,
             "frameworks": [{"id": "a", "name": 3, "imageName": "i", "urlString": "u", "description": "d"}],
             "orders": [{"id": "o", "placedAt": "2026-01-01T00:00:00Z", "items": [{"itemName": "x", "price": 1, "aisle": -1}]}],
             "events": [{"id": "e", "title": "t", "date": "2026-02-30", "notes": 1}],
             "images": [{"url": "ftp://x/y.png"}],
             "notes": [{"id": "n", "text": "", "pinned": true, "due": "2026-01-01"}]}
            """
        #expect {
            try Feed.decode(Data(text.utf8), recordTypes: [Note.self])
        } throws: { error in
            let problems = (error as? FeedValidationError)?.problems.map { "\($0.path): \($0.message)" } ?? []
            return problems == [
                "frameworks[0].name: expected a string, found the number 3",
                "orders[0].items[0].aisle: -1 is not an integer of at least 0",
                "events[0].date: '2026-02-30' is not a calendar date (YYYY-MM-DD, a day that exists)",
                "events[0].notes: expected a string, found a number",
                "images[0].url: 'ftp://x/y.png' must be an http(s) URL or relative to the feed",
                "notes[0].text: must not be empty",
            ]
        }
    }
}
