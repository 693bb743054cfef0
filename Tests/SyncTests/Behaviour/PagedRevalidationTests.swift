import Foundation
import Testing

@testable import Store

/// A paged feed is up to date only when every page is: each page is revalidated with its own
/// validators, and a change on any page applies the whole feed. `force` (and a policy other than
/// the last sync's) fetches every page unconditionally.
@Suite(.timeLimit(.minutes(10)))
struct PagedRevalidationTests {
    /// feed.json -> feed-2.json -> feed-3.json on the feed server (content-hash ETags).
    @discardableResult
    private func publishPages(_ server: FeedServer, lastPage: [JSONValue] = [KindFixture.framework.json("f3", 1)]) throws -> URL {
        let first = try server.publish(
            "feed.json", behaviourFeed(frameworks: [KindFixture.framework.json("f1", 1)], next: "feed-2.json"))
        try server.publish("feed-2.json", behaviourFeed(frameworks: [KindFixture.framework.json("f2", 1)], next: "feed-3.json"))
        try server.publish("feed-3.json", behaviourFeed(frameworks: lastPage))
        return first
    }

    @Test func aChangeOnTheLastPageArrives() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = try publishPages(server)
        let recording = RecordingTransport()

        try await withBehaviourStore(transport: recording.transport) { store, _ in
            let first = try await store.sync(from: .remote(url))
            #expect(first.frameworks == counts(inserted: 3))

            // Nothing changed: every page answers 304.
            let second = try await store.sync(from: .remote(url))
            #expect(second.status == .upToDate)
            for path in ["/feed.json", "/feed-2.json", "/feed-3.json"] {
                #expect(recording.requests(to: path).last?.headers["If-None-Match"] != nil, "\(path)")
            }

            // Only the last page changes: its record arrives, the others are kept.
            try publishPages(server, lastPage: [KindFixture.framework.json("f3", 1), KindFixture.framework.json("f4", 1)])
            let third = try await store.sync(from: .remote(url))
            #expect(third.status == .applied)
            #expect(third.frameworks == counts(inserted: 1, unchanged: 3))
            #expect(try await KindFixture.framework.version("f4", in: store) == 1)

            // And the new page's validators are those sent next.
            let fourth = try await store.sync(from: .remote(url))
            #expect(fourth.status == .upToDate)
        }
    }

    @Test func aChangeOnAMiddlePageArrives() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = try publishPages(server)

        try await withBehaviourStore { store, _ in
            _ = try await store.sync(from: .remote(url))
            try server.publish(
                "feed-2.json",
                behaviourFeed(
                    frameworks: [KindFixture.framework.json("f2", 1), KindFixture.framework.json("f5", 1)], next: "feed-3.json"))
            let report = try await store.sync(from: .remote(url))
            #expect(report.status == .applied)
            #expect(report.frameworks == counts(inserted: 1, unchanged: 3))
            #expect(try await KindFixture.framework.version("f5", in: store) == 1)
        }
    }

    /// A page added at the end changes the page before it (its `next`): it is fetched.
    @Test func aPageAddedAtTheEndArrives() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = try publishPages(server)

        try await withBehaviourStore { store, _ in
            _ = try await store.sync(from: .remote(url))
            try server.publish("feed-4.json", behaviourFeed(frameworks: [KindFixture.framework.json("f4", 1)]))
            try server.publish(
                "feed-3.json", behaviourFeed(frameworks: [KindFixture.framework.json("f3", 1)], next: "feed-4.json"))
            let report = try await store.sync(from: .remote(url))
            #expect(report.status == .applied)
            #expect(report.frameworks == counts(inserted: 1, unchanged: 3))
        }
    }

    /// Page URLs are remembered, but never with credentials.
    @Test func pageURLsAreRememberedWithoutCredentials() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        _ = try publishPages(server)
        let port = try #require(server.baseURL.port)
        let url = try #require(URL(string: "http://reader:hunter2-pw@127.0.0.1:\(port)/feed.json"))

        try await withBehaviourStore { store, _ in
            let first = try await store.sync(from: .remote(url))
            #expect(first.frameworks == counts(inserted: 3))
            let pages = try await store.read { try $0.query("SELECT url FROM sync_pages ORDER BY number") { $0.text(0) } }
            #expect(pages.allSatisfy { !$0.contains("hunter2") }, "\(pages)")
            #expect(try storeFileBytes(store).range(of: Data("hunter2".utf8)) == nil)
            // Whatever was remembered, the next sync is correct.
            let second = try await store.sync(from: .remote(url))
            #expect(second.frameworks.inserted == 0)
        }
    }

    @Test func forceFetchesEveryPageUnconditionally() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = try publishPages(server)
        let recording = RecordingTransport()

        try await withBehaviourStore(transport: recording.transport) { store, _ in
            _ = try await store.sync(from: .remote(url))
            try await KindFixture.framework.update("f2", 9, in: store)
            var options = SyncOptions(policy: .keepExisting)
            options.force = true
            let before = recording.requests.current.count
            let forced = try await store.sync(from: .remote(url), options: options)
            #expect(forced.status == .applied)
            #expect(forced.frameworks == counts(kept: 1, unchanged: 2))
            let requests = recording.requests.current.dropFirst(before)
            #expect(requests.count == 3)
            #expect(requests.allSatisfy { $0.headers["If-None-Match"] == nil && $0.headers["If-Modified-Since"] == nil })
        }
    }

    /// `sync`, a local edit, then `sync --policy prefer-remote`: the new policy implies a full
    /// fetch, and the record is restored (a 304 would have kept the edit).
    @Test func anotherPolicyThanTheLastSyncsFetchesAndReconciles() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = try server.publish("feed.json", behaviourFeed(frameworks: [KindFixture.framework.json("f1", 1)]))

        try await withBehaviourStore { store, _ in
            _ = try await store.sync(from: .remote(url))
            try await KindFixture.framework.update("f1", 5, in: store)
            let report = try await store.sync(from: .remote(url), options: SyncOptions(policy: .preferRemote))
            #expect(report.status == .applied)
            #expect(report.frameworks == counts(updated: 1))
            #expect(try await KindFixture.framework.version("f1", in: store) == 1)

            // The same policy again: revalidation, up to date.
            let again = try await store.sync(from: .remote(url), options: SyncOptions(policy: .preferRemote))
            #expect(again.status == .upToDate)
        }
    }

    /// A dry run with another policy fetches too, and writes nothing (the remembered policy
    /// included: the next real sync with the old policy is still up to date).
    @Test func aDryRunDoesNotRememberItsPolicy() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = try server.publish("feed.json", behaviourFeed(frameworks: [KindFixture.framework.json("f1", 1)]))

        try await withBehaviourStore { store, _ in
            _ = try await store.sync(from: .remote(url))
            try await KindFixture.framework.update("f1", 5, in: store)
            let dry = try await store.sync(from: .remote(url), options: SyncOptions(policy: .preferRemote, dryRun: true))
            #expect(dry.frameworks == counts(updated: 1))
            #expect(try await store.sync(from: .remote(url)).status == .upToDate)
            #expect(try await KindFixture.framework.version("f1", in: store) == 5)
        }
    }
}
