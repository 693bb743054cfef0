import Foundation
import Testing

@testable import Store

/// A presigned URL (S3, GCS, Azure SAS, CloudFront) is signed again for every sync: each
/// signing is the same source, and its signature (a credential) is never kept or shown.
@Suite(.timeLimit(.minutes(10)))
struct SignedURLBehaviourTests {
    @Test(
        "a signed URL's key leaves out the signing parameters and keeps every other one, in order",
        arguments: [
            (
                "https://h/pub/manifest.json?X-Amz-Signature=a&X-Amz-Date=1&region=eu",
                "https://h/pub/manifest.json?region=eu"
            ),
            (
                "https://h/pub/manifest.json?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F20260101%2Fus-east-1"
                    + "&x-amz-date=20260101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host"
                    + "&X-Amz-Security-Token=tok&X-AMZ-SIGNATURE=ab12",
                "https://h/pub/manifest.json"
            ),
            (
                "https://acct.blob.core.windows.net/c/manifest.json?a=1&sv=2022-11-02&ss=b&srt=o&sp=r"
                    + "&se=2026-01-01T00:00:00Z&st=2025-12-31T00:00:00Z&spr=https&sig=abc%2Bdef%3D&b=2",
                "https://acct.blob.core.windows.net/c/manifest.json?a=1&b=2"
            ),
            (
                "https://storage.googleapis.com/b/manifest.json?X-Goog-Algorithm=GOOG4-RSA-SHA256"
                    + "&X-Goog-Credential=sa%40p.iam.gserviceaccount.com%2F20260101%2Fauto%2Fstorage%2Fgoog4_request"
                    + "&X-Goog-Date=20260101T000000Z&X-Goog-Expires=900&X-Goog-SignedHeaders=host"
                    + "&X-Goog-Signature=0a1b&generation=7",
                "https://storage.googleapis.com/b/manifest.json?generation=7"
            ),
            (
                "https://d111.cloudfront.net/manifest.json?Expires=1767225600&Signature=x~y_&Key-Pair-Id=K2",
                "https://d111.cloudfront.net/manifest.json"
            ),
            (
                "https://b.s3.amazonaws.com/manifest.json?AWSAccessKeyId=AKIA&Expires=1767225600&Signature=z%2B",
                "https://b.s3.amazonaws.com/manifest.json"
            ),
            // Without a signature, Azure's and CloudFront's plainer names select a feed.
            ("https://h/feed.json?sp=2&se=3&expires=4&policy=p", "https://h/feed.json?sp=2&se=3&expires=4&policy=p"),
            // Azure's names are exact: `SP` is not Azure's.
            ("https://h/feed.json?sig=s&SP=1", "https://h/feed.json?SP=1"),
            ("https://reader:pw@h/feed.json?X-Amz-Signature=a#top", "https://h/feed.json#top"),
        ])
    func keyLeavesOutSigningParameters(url: String, key: String) throws {
        let source = try FeedSource(url)
        #expect(source.key == key)
        #expect(source.description == key)
        // The request still goes to the whole URL.
        #expect(source.url.absoluteString == url)
    }

    /// Two syncs of a published folder through two signings share one source: the second is
    /// incremental, and the signature is in neither the store nor a report.
    @Test func twoSigningsAreOneSource() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        try await withBehaviourStore { store, folder in
            let publisher = try await openSecondStore(in: folder, name: "publisher.sqlite")
            let pub = server.root.appendingPathComponent("pub")
            try await publisher.events.insert(Event(id: "e1", title: "one", date: CalendarDate("2026-01-01")!))
            _ = try await publisher.publish(to: pub)

            let signed = { (signature: String) in
                FeedSource.remote(server.url("/pub/manifest.json?X-Amz-Date=2026&X-Amz-Signature=\(signature)&region=eu"))
            }
            let first = try await store.sync(from: signed("aaa111"))
            #expect(first.status == .applied)
            #expect(first.events.inserted == 1)

            try await publisher.events.insert(Event(id: "e2", title: "two", date: CalendarDate("2026-01-02")!))
            _ = try await publisher.publish(to: pub)
            await publisher.close()
            let second = try await store.sync(from: signed("bbb222"))
            #expect(second.status == .applied)
            #expect(second.events.inserted == 1)
            let published = try #require(second.published)
            #expect(published.fullSyncReason == nil, "\(published)")
            #expect(published.fromSequence != nil)

            let third = try await store.sync(from: signed("ccc333"))
            #expect(third.status == .upToDate)

            let key = server.url("/pub/manifest.json?region=eu").absoluteString
            #expect(try await store.syncSources().map(\.source) == [key])
            let history = try await store.syncHistory()
            #expect(history.map(\.source) == [key, key, key])
            let reports = [first, second, third].map { String(describing: $0.jsonValue) }
            for signature in ["aaa111", "bbb222", "ccc333"] {
                #expect(try storeFileBytes(store).range(of: Data(signature.utf8)) == nil)
                #expect(!reports.contains { $0.contains(signature) })
                #expect(!history.contains { ($0.reportJSON ?? "").contains(signature) })
            }
        }
    }

    /// A failing sync names the URL without its signature, in the error and in the history.
    @Test func failureLeavesOutTheSignature() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        try await withBehaviourStore { store, _ in
            let url = server.url("/status/404?X-Goog-Signature=secret9f8e&X-Goog-Date=1")
            let error = await behaviourError { try await store.sync(from: .remote(url)) }
            let history = try await store.syncHistory()
            #expect(history.first?.source == server.url("/status/404").absoluteString)
            #expect(history.first?.error?.contains("secret9f8e") == false, "\(history.first?.error ?? "")")
            #expect(history.first?.error?.contains("HTTP 404") == true, "\(history.first?.error ?? "")")
            #expect(!String(describing: error).contains("secret9f8e"))
            #expect(try storeFileBytes(store).range(of: Data("secret9f8e".utf8)) == nil)
        }
    }

    /// State an older version kept under the whole signed URL (as `sources list` printed it)
    /// can still be forgotten by that URL.
    @Test func forgettingASignedURLForgetsItsOlderKey() async throws {
        try await withBehaviourStore { store, _ in
            let old = "https://h/pub/manifest.json?X-Amz-Date=1&X-Amz-Signature=aaa111"
            try await store.write { try $0.execute("INSERT INTO sync_sources (source) VALUES (?)", [.text(old)]) }
            #expect(try await store.syncSources().map(\.source) == [old])
            #expect(try await store.forgetSyncSource(FeedSource(old)))
            #expect(try await store.syncSources().isEmpty)
        }
    }
}
