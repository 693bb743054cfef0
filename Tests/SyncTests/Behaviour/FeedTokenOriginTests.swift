import Foundation
import Testing

@testable import Store

/// The bearer token goes to the first page's origin (scheme, host, port) only: never to a page
/// whose `next` names another origin, nor to any image download.
@Suite(.timeLimit(.minutes(10)))
struct FeedTokenOriginTests {
    static let token = "s3cr3t-token-for-origin-tests"

    /// Page 1 and page 3 on server A, page 2 and an image on server B (another port of
    /// 127.0.0.1: another origin), and an image on A: only A's pages get the token.
    @Test func tokenGoesToTheFirstPagesOriginOnly() async throws {
        let a = try await RecordingServer.start()
        defer { a.stop() }
        let b = try await RecordingServer.start()
        defer { b.stop() }
        try a.publish(
            "feed.json",
            behaviourFeed(
                frameworks: [KindFixture.framework.json("f1", 1)], next: b.url("/feed-2.json").absoluteString))
        try b.publish(
            "feed-2.json",
            behaviourFeed(
                frameworks: [KindFixture.framework.json("f2", 1)],
                images: [imageJSON(b.url("/img/b.png").absoluteString), imageJSON(a.url("/img/a.png").absoluteString)],
                next: a.url("/feed-3.json").absoluteString))
        try a.publish("feed-3.json", behaviourFeed(frameworks: [KindFixture.framework.json("f3", 1)]))
        try a.publish("img/a.png", Data("A".utf8))
        try b.publish("img/b.png", Data("B".utf8))

        try await withBehaviourStore { store, _ in
            var options = SyncOptions()
            options.bearerToken = Self.token
            let report = try await store.sync(from: .remote(a.url("/feed.json")), options: options)
            #expect(report.frameworks.inserted == 3)
            #expect(report.images.downloaded == 2)
        }

        let seenByA = try await a.requests()
        let seenByB = try await b.requests()
        #expect(seenByA.filter { $0.path == "/feed.json" }.map(\.authorization) == ["Bearer \(Self.token)"])
        #expect(seenByA.filter { $0.path == "/feed-3.json" }.map(\.authorization) == ["Bearer \(Self.token)"])
        #expect(seenByB.filter { $0.path == "/feed-2.json" }.map(\.authorization) == [nil])
        // Images never carry it, on either origin.
        #expect(seenByA.filter { $0.path == "/img/a.png" }.map(\.authorization) == [nil])
        #expect(seenByB.filter { $0.path == "/img/b.png" }.map(\.authorization) == [nil])
        #expect(seenByB.allSatisfy { $0.authorization == nil })
    }

    /// "localhost" and "127.0.0.1" reach the same socket but are two origins: the token named for
    /// one is not sent to the other.
    @Test func sameServerUnderAnotherHostNameIsAnotherOrigin() async throws {
        let a = try await RecordingServer.start()
        defer { a.stop() }
        let port = try #require(a.baseURL.port)
        try a.publish("feed.json", behaviourFeed(next: "http://localhost:\(port)/feed-2.json"))
        try a.publish("feed-2.json", behaviourFeed(frameworks: [KindFixture.framework.json("f2", 1)]))

        try await withBehaviourStore { store, _ in
            var options = SyncOptions()
            options.bearerToken = Self.token
            _ = try await store.sync(from: .remote(a.url("/feed.json")), options: options)
        }

        let seen = try await a.requests()
        #expect(seen.filter { $0.path == "/feed.json" }.map(\.authorization) == ["Bearer \(Self.token)"])
        #expect(seen.filter { $0.path == "/feed-2.json" }.map(\.authorization) == [nil])
    }
}
