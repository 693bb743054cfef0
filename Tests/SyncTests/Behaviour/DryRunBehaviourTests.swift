import Foundation
import Testing

@testable import Store

/// A dry run computes the report a real run gives, and writes nothing.
@Suite(.timeLimit(.minutes(10)))
struct DryRunBehaviourTests {
    /// A store synced once from `feed.json`, edited locally, with `feed.json` then rewritten so
    /// that the next sync inserts, updates, keeps, leaves unchanged, deletes, conflicts, stores
    /// an image and downloads one (a file next to the feed).
    func prepare(_ store: Store, _ folder: BehaviourFolder, policy: SyncPolicy) async throws -> FeedSource {
        let options = SyncOptions(policy: policy)
        var first: [KindFixture: [JSONValue]] = [:]
        for fixture in KindFixture.allCases {
            first[fixture] = ["same", "remote", "both", "doomed", "edited-doomed"].map { fixture.json($0, 1) }
        }
        let source = try folder.write(
            "feed.json",
            behaviourFeed(
                frameworks: first[.framework], orders: first[.order], events: first[.event],
                images: [imageJSON("https://example.com/kept.png", data: Data([1]))]))
        _ = try await store.sync(from: source, options: options)
        for fixture in KindFixture.allCases {
            try await fixture.update("both", 2, in: store)
            try await fixture.update("edited-doomed", 2, in: store)
        }
        try folder.write("img/local.png", Data([0x89, 0x50, 0x4E, 0x47]))
        var second: [KindFixture: [JSONValue]] = [:]
        for fixture in KindFixture.allCases {
            second[fixture] = [
                fixture.json("same", 1), fixture.json("remote", 3), fixture.json("both", 3), fixture.json("new", 1),
            ]
        }
        let doomed = ["doomed", "edited-doomed"]
        try folder.write(
            "feed.json",
            behaviourFeed(
                frameworks: second[.framework], orders: second[.order], events: second[.event],
                images: [
                    imageJSON("https://example.com/kept.png", data: Data([2])),
                    imageJSON("https://example.com/new.png", data: Data([3]), contentType: "image/png"),
                    imageJSON("img/local.png"),
                ],
                deleted: [.framework: doomed, .order: doomed, .event: doomed]))
        return source
    }

    @Test(arguments: SyncPolicy.allCases)
    func dryRunReportsWhatTheRealRunDoesAndWritesNothing(_ policy: SyncPolicy) async throws {
        try await withBehaviourStore { store, folder in
            let source = try await prepare(store, folder, policy: policy)
            let export = try await store.exportFeed()
            let history = try await store.syncHistory()
            let bytesBefore = try await store.read { db in
                try db.query(
                    "SELECT s.source, t.kind, r.key, r.hash FROM sync_records AS r JOIN sync_streams AS t ON t.id = r.stream JOIN sync_sources AS s ON s.id = t.source_id ORDER BY 1, 2, 3"
                ) { "\($0.text(0)) \($0.text(1)) \($0.text(2)) \($0.int64(3))" }
            }

            let dry = try await store.sync(from: source, options: SyncOptions(policy: policy, dryRun: true))

            #expect(dry.status == .dryRun)
            #expect(try await store.exportFeed() == export)
            #expect(try await store.syncHistory() == history)
            #expect(
                try await store.read { db in
                    try db.query(
                        "SELECT s.source, t.kind, r.key, r.hash FROM sync_records AS r JOIN sync_streams AS t ON t.id = r.stream JOIN sync_sources AS s ON s.id = t.source_id ORDER BY 1, 2, 3"
                    ) { "\($0.text(0)) \($0.text(1)) \($0.text(2)) \($0.int64(3))" }
                } == bytesBefore)
            #expect(try await store.images.contains("img/local.png") == false)

            // A second dry run gives the same report: the first changed nothing.
            #expect(try await store.sync(from: source, options: SyncOptions(policy: policy, dryRun: true)) == dry)

            let real = try await store.sync(from: source, options: SyncOptions(policy: policy))
            #expect(real.status == .applied)
            #expect(ReportCounts(dry) == ReportCounts(real))
            #expect(real.images.downloaded == 1)
            #expect(try await store.images.get("img/local.png")?.data == Data([0x89, 0x50, 0x4E, 0x47]))
            #expect(try await store.exportFeed() != export)
            #expect(try await store.syncHistory().count == history.count + 1)

            // The counts themselves, per policy (every kind alike).
            let expected: SyncReport.Counts =
                switch policy {
                case .keepExisting: counts(inserted: 1, kept: 3, unchanged: 1, deleted: 1)
                case .preferRemote: counts(inserted: 1, updated: 2, unchanged: 1, deleted: 2)
                case .threeWay: counts(inserted: 1, updated: 1, kept: 2, unchanged: 1, deleted: 1)
                }
            #expect(real.frameworks == expected)
            #expect(real.orders == expected)
            #expect(real.events == expected)
            #expect(real.conflicts.map(\.key) == (policy == .threeWay ? ["both", "both", "both"] : []))
        }
    }

    /// A dry run of a first sync into an empty store: everything would be inserted, nothing is.
    @Test func dryRunIntoAnEmptyStore() async throws {
        try await withBehaviourStore { store, folder in
            let source = try folder.write(
                "feed.json",
                behaviourFeed(
                    frameworks: [KindFixture.framework.json("f", 1)], orders: [KindFixture.order.json("o", 1)],
                    events: [KindFixture.event.json("e", 1)]))
            let empty = try await store.exportFeed()
            let dry = try await store.sync(from: source, options: SyncOptions(dryRun: true))
            #expect(dry.frameworks == counts(inserted: 1))
            #expect(dry.orders == counts(inserted: 1))
            #expect(dry.events == counts(inserted: 1))
            #expect(try await store.exportFeed() == empty)
            #expect(try await store.syncHistory().isEmpty)
            #expect(try await store.read { try $0.query("SELECT count(*) FROM sync_sources") { $0.int(0) } } == [0])
        }
    }

    /// A failing dry run is not recorded either.
    @Test func failedDryRunIsNotRecorded() async throws {
        try await withBehaviourStore { store, folder in
            let source = try folder.write("feed.json", #"{"version": 2}"#)
            let error = await behaviourError { try await store.sync(from: source, options: SyncOptions(dryRun: true)) }
            #expect(error is FeedValidationError)
            #expect(try await store.syncHistory().isEmpty)
        }
    }
}
