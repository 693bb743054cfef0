import Foundation
import Testing

@testable import Store

/// Every sync but a dry run is recorded, failures included; the bearer token never is.
@Suite(.timeLimit(.minutes(10)))
struct SyncHistoryBehaviourTests {
    @Test func appliedUpToDateAndFailedAreRecorded() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = try server.publish("feed.json", behaviourFeed(events: [KindFixture.event.json("e", 1)]))

        try await withBehaviourStore { store, folder in
            let file = try folder.write("feed.json", behaviourFeed(frameworks: [KindFixture.framework.json("f", 1)]))
            let broken = try folder.write(
                "broken.json", #"{"version": 1, "events": [{"id": "e", "title": "t", "date": "2026-02-30"}]}"#)

            _ = try await store.sync(from: file, options: SyncOptions(policy: .threeWay))
            _ = try await store.sync(from: .remote(url), options: SyncOptions(policy: .preferRemote))
            // The same policy again (another would fetch unconditionally): up to date.
            _ = try await store.sync(from: .remote(url), options: SyncOptions(policy: .preferRemote))
            _ = try await store.sync(from: file, options: SyncOptions(policy: .preferRemote, dryRun: true))
            _ = await behaviourError { try await store.sync(from: broken, options: SyncOptions(policy: .threeWay)) }
            _ = await behaviourError { try await store.sync(from: .file(folder.file("absent.json"))) }
            _ = await behaviourError { try await store.sync(from: broken, options: SyncOptions(dryRun: true)) }

            let history = try await store.syncHistory()
            #expect(history.map(\.outcome) == [.failed, .failed, .upToDate, .applied, .applied])
            #expect(
                history.map(\.source) == [
                    folder.file("absent.json").path, broken.url.path, url.absoluteString, url.absoluteString, file.url.path,
                ])
            #expect(history.map(\.policy) == [.keepExisting, .threeWay, .preferRemote, .preferRemote, .threeWay])
            #expect(history.allSatisfy { $0.startedAt == behaviourNow && $0.finishedAt == behaviourNow })

            // Applied and up-to-date syncs keep their report; failures their error.
            let applied = try #require(history.last)
            #expect(applied.error == nil)
            let report = try #require(applied.reportJSON)
            #expect(report.contains(#""frameworks":{"inserted":1,"updated":0,"kept":0,"unchanged":0,"deleted":0}"#))
            #expect(report.contains(#""status":"applied""#))
            #expect(history[2].reportJSON?.contains(#""status":"up-to-date""#) == true)
            #expect(history[1].reportJSON == nil)
            #expect(history[1].error?.contains("\(broken.url.path): events[0].date: '2026-02-30' is not a calendar date") == true)
            #expect(history[0].error?.contains("cannot read") == true)

            // The JSON form, as `storectl history --json` prints it.
            let json = history[0].jsonValue
            #expect(json["outcome"] == .string("failed"))
            #expect(json["source"] == .string(folder.file("absent.json").path))
            #expect(history.last?.jsonValue["report"]?["frameworks"]?["inserted"] == .number("1"))

            #expect(try await store.syncHistory(limit: 2).count == 2)
        }
    }

    /// A password in the source URL is not kept either: the history names the URL without it.
    @Test func urlCredentialsAreNotStored() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let port = try #require(server.baseURL.port)
        let url = try #require(URL(string: "http://reader:hunter2-pw@127.0.0.1:\(port)/status/404"))
        try await withBehaviourStore { store, _ in
            let error = await behaviourError { try await store.sync(from: .remote(url)) }
            let history = try await store.syncHistory()
            #expect(history.first?.source == "http://127.0.0.1:\(port)/status/404")
            #expect(history.first?.error?.contains("hunter2") == false, "\(history.first?.error ?? "")")
            #expect(!String(describing: error).contains("hunter2"))
            #expect(try storeFileBytes(store).range(of: Data("hunter2".utf8)) == nil)
        }
    }

    static let token = "tok-3f9a7c1e5d-SECRET-b64+/="

    /// A failing sync with a bearer token: the token was sent, yet it is in no error, no
    /// history entry and nowhere in the database files.
    @Test(arguments: ["/status/401", "/status/500", "/status/500-then-200/broken.json", "/feed.json"])
    func bearerTokenIsNeverStored(_ path: String) async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        try server.publish("broken.json", #"{"version": 1, "events": [{"id": "e", "title": "t", "date": "2026-02-30"}]}"#)
        try server.publish(
            "feed.json",
            behaviourFeed(
                events: [KindFixture.event.json("e", 1)],
                images: [imageJSON(server.url("/img/missing.png").absoluteString)]))
        let recording = RecordingTransport()

        try await withBehaviourStore(transport: recording.transport) { store, _ in
            var options = SyncOptions()
            options.bearerToken = Self.token
            var errors: [String] = []
            do {
                let report = try await store.sync(from: .remote(server.url(path)), options: options)
                errors += report.imageFailures.map(\.reason)
                errors.append(String(describing: report.jsonValue))
            } catch {
                errors.append(String(describing: error))
                errors.append(String(reflecting: error))
                errors.append(error.localizedDescription)
            }

            let feedRequests = recording.requests.current.filter { !$0.url.path.hasPrefix("/img/") }
            #expect(!feedRequests.isEmpty)
            #expect(feedRequests.allSatisfy { $0.headers["Authorization"] == "Bearer \(Self.token)" })
            // Images are fetched without it (they may live on another host).
            #expect(recording.requests(to: "/img/missing.png").allSatisfy { $0.headers["Authorization"] == nil })

            let history = try await store.syncHistory()
            #expect(history.count == 1)
            for entry in history {
                errors += [entry.source, entry.error ?? "", entry.reportJSON ?? "", JSONWriter().string(entry.jsonValue)]
            }
            for text in errors { #expect(!text.contains(Self.token), "\(text)") }
            #expect(!errors.joined().contains("SECRET"))
            let bytes = try storeFileBytes(store)
            #expect(!bytes.isEmpty)
            #expect(bytes.range(of: Data(Self.token.utf8)) == nil)
            #expect(bytes.range(of: Data("SECRET".utf8)) == nil)
        }
    }
}
