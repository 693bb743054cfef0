import Foundation
import Testing

@testable import Store

/// The last write of a sync that downloaded images (the history's image counts, the validators,
/// the cursor) comes after its records committed. When that write fails (a full disk), the sync
/// used to throw as if nothing was written; it now reports what it applied, and why the rest
/// could not be recorded.
@Suite(.timeLimit(.minutes(10)))
struct UnrecordedSyncTests {
    @Test("the bookkeeping write after the images fails: applied, with the reason in `unrecorded`")
    func bookkeepingFailureAfterImages() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try folder.write("feed/img/a.png", "A")
            let source = try folder.write(
                "feed/feed.json",
                behaviourFeed(frameworks: [KindFixture.framework.json("f1", 1)], images: [imageJSON("img/a.png")]))
            // The closing write begins by completing the history row; this makes it fail, on the
            // writer's connection only (a temporary trigger), as a full disk would.
            try await store.write { db in
                try db.execute(
                    "CREATE TEMP TRIGGER no_room BEFORE UPDATE ON main.sync_history BEGIN SELECT RAISE(ABORT, 'no room (simulated)'); END"
                )
            }
            let report = try await store.sync(from: source)
            #expect(report.status == .applied)
            #expect(report.unrecorded?.contains("no room (simulated)") == true, "\(String(describing: report.unrecorded))")
            #expect(report.images.downloaded == 1)
            #expect(try await store.frameworks.count() == 1)
            #expect(try await store.images.get("img/a.png")?.data == Data("A".utf8))
            #expect(JSONWriter(pretty: false).string(report.jsonValue).contains("\"unrecorded\""))

            try await store.write { db in try db.execute("DROP TRIGGER temp.no_room") }
            let again = try await store.sync(from: source)
            #expect(again.unrecorded == nil)
            #expect(again.images.alreadyCached == 1)
            #expect(try await store.frameworks.count() == 1)
        }
    }
}
