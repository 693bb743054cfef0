import Foundation
import Testing

@testable import Store

/// Sync decides after its download, inside the write transaction; concurrent syncs of one
/// source share one fetch.
@Suite(.timeLimit(.minutes(10)))
struct SyncConcurrencyBehaviourTests {
    /// While the sync waits inside its fetch, the test edits a record the feed carries and
    /// inserts another key the feed carries; the sync must see both when it reconciles.
    @Test(arguments: SyncPolicy.allCases)
    func localEditDuringDownload(_ policy: SyncPolicy) async throws {
        let feedURL = "http://feeds.invalid/feed.json"
        var records: [KindFixture: [JSONValue]] = [:]
        for fixture in KindFixture.allCases {
            records[fixture] = [fixture.json("edited", 1), fixture.json("inserted", 3), fixture.json("fresh", 1)]
        }
        let gate = GatedTransport(bodies: [
            feedURL: Data(
                behaviourFeed(
                    frameworks: records[.framework], orders: records[.order], events: records[.event]
                ).utf8)
        ])

        try await withBehaviourStore(transport: gate.transport) { store, _ in
            for fixture in KindFixture.allCases { try await fixture.insert("edited", 1, into: store) }

            let sync = Task { try await store.sync(from: .remote(URL(string: feedURL)!), options: SyncOptions(policy: policy)) }
            await gate.requested.wait()
            // The sync is inside its fetch now: commit local changes meanwhile.
            for fixture in KindFixture.allCases {
                try await fixture.update("edited", 2, in: store)
                try await fixture.insert("inserted", 2, into: store)
            }
            await gate.release.open()
            let report = try await sync.value

            #expect(gate.count.current == 1)
            #expect(report.status == .applied)
            for fixture in KindFixture.allCases {
                switch policy {
                case .keepExisting:
                    #expect(report[fixture.kind] == counts(inserted: 1, kept: 2), "\(fixture)")
                    #expect(try await fixture.version("edited", in: store) == 2)
                    #expect(try await fixture.version("inserted", in: store) == 2)
                case .threeWay:
                    // Neither was received from this source before: changed on both sides.
                    #expect(report[fixture.kind] == counts(inserted: 1, kept: 2), "\(fixture)")
                    #expect(try await fixture.version("edited", in: store) == 2)
                    #expect(try await fixture.version("inserted", in: store) == 2)
                case .preferRemote:
                    #expect(report[fixture.kind] == counts(inserted: 1, updated: 2), "\(fixture)")
                    #expect(try await fixture.version("edited", in: store) == 1)
                    #expect(try await fixture.version("inserted", in: store) == 3)
                }
                #expect(try await fixture.version("fresh", in: store) == 1)
            }
            #expect(report.conflicts.count == (policy == .threeWay ? 6 : 0))
        }
    }

    /// Two syncs of one http source started together from a fresh store: one request reaches
    /// the server; both apply the same pages (the second finds everything in place).
    @Test func concurrentSyncsShareOneFetch() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = try server.publish(
            "feed.json",
            behaviourFeed(
                frameworks: (1...5).map { KindFixture.framework.json("f\($0)", 1) }, events: [KindFixture.event.json("e", 1)]))
        let recording = RecordingTransport(delay: .milliseconds(300))

        try await withBehaviourStore(transport: recording.transport) { store, _ in
            async let one = store.sync(from: .remote(url))
            async let two = store.sync(from: .remote(url))
            let reports = try await [one, two]

            #expect(try await server.hits("/feed.json") == 1)
            #expect(recording.requests.current.count == 1)
            #expect(await store.fetchCoalescer.fetchCount == 1)
            #expect(reports.allSatisfy { $0.status == .applied })
            let frameworks = reports.map(\.frameworks).sorted { $0.inserted > $1.inserted }
            #expect(frameworks == [counts(inserted: 5), counts(unchanged: 5)])
            #expect(try await store.frameworks.count() == 5)
            #expect(try await store.syncHistory().count == 2)

            // The fetch is shared only while it is in flight: a later sync fetches again
            // (conditionally) and finds the feed unchanged.
            let later = try await store.sync(from: .remote(url))
            #expect(later.status == .upToDate)
            #expect(try await server.hits("/feed.json") == 2)
            #expect(await store.fetchCoalescer.fetchCount == 2)
        }
    }

    /// Concurrent syncs of different sources do not share a fetch.
    @Test func differentSourcesFetchSeparately() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let a = try server.publish("a.json", behaviourFeed(events: [KindFixture.event.json("a", 1)]))
        let b = try server.publish("b.json", behaviourFeed(events: [KindFixture.event.json("b", 1)]))
        let recording = RecordingTransport(delay: .milliseconds(100))
        try await withBehaviourStore(transport: recording.transport) { store, _ in
            async let one = store.sync(from: .remote(a))
            async let two = store.sync(from: .remote(b))
            let reports = try await [one, two]
            #expect(reports.map(\.events) == [counts(inserted: 1), counts(inserted: 1)])
            #expect(try await server.hits() == ["/a.json": 1, "/b.json": 1])
            #expect(try await store.events.fetchAll().map(\.id) == ["a", "b"])
        }
    }
}
