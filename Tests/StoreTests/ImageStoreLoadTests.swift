import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// `store.images.load` against a real HTTP server on 127.0.0.1 (`RecordingServer`), on a
/// store in a real SQLite file.
@Suite("Image loads over HTTP", .timeLimit(.minutes(10)))
struct ImageStoreLoadTests {
    /// A store with this image budget and one attempt per request (a refusal is not retried
    /// anyway; a failure that would be is reported at once), and a server.
    private func withLoadStore(
        budget: Int = 1 << 20, _ body: (Store, RecordingServer) async throws -> Void
    ) async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        var configuration = Store.Configuration()
        configuration.imageCacheBudget = budget
        configuration.transport = .live
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 1)
        try await withTemporaryStore(configuration: configuration) { store, _ in try await body(store, server) }
    }

    /// The requests the server saw for `url`'s path (query included, as it records them).
    private func hits(_ url: URL, on server: RecordingServer) async throws -> Int {
        let path = url.absoluteString.dropFirst(server.baseURL.absoluteString.count)
        return try await server.requests().filter { $0.path == path }.count
    }

    /// From the review: any 2xx was stored as the whole image (a 206's part of it, a 204's or
    /// an empty 200's nothing), and so was a soft 404's page: cached until evicted, never
    /// downloaded again. Each is refused, naming the url and why, caches nothing, and the next
    /// load asks the server again.
    @Test(
        "a response that is not a whole image is refused and not cached",
        arguments: [
            ("/reply/206?type=image/png&body=PNG", "the server answered HTTP 206, not 200 with the whole image"),
            ("/reply/204?type=image/png", "the server answered HTTP 204, not 200 with the whole image"),
            ("/reply/200?type=image/png", "the body is empty"),
            ("/reply/200?type=text/html&body=missing", "the server sent text/html"),
            ("/reply/200?type=Text/HTML;%20charset=utf-8&body=missing", "the server sent text/html"),
            ("/reply/200?type=application/json&body=%7B%7D", "the server sent application/json"),
        ])
    func refusesWhatIsNotAWholeImage(_ path: String, _ reason: String) async throws {
        try await withLoadStore { store, server throws in
            let url = server.url(path)
            for attempt in 1...2 {
                let error = await #expect(throws: HTTPError.self) { try await store.images.load(url.absoluteString) }
                #expect(error == .notAnImage(url: url, reason: reason))
                #expect(error.map(String.init(describing:)) == "\(url.absoluteString): not an image: \(reason)")
                #expect(error?.isTransient == false)
                #expect(try await store.images.list().isEmpty)
                #expect(try await hits(url, on: server) == attempt)
            }
        }
    }

    @Test(
        "a whole image is stored: 200 or 203, any image type, octet-stream, or no Content-Type",
        arguments: [
            ("/reply/200?type=image/png&body=PNG", "image/png"),
            ("/reply/203?type=image/jpeg&body=PNG", "image/jpeg"),
            ("/reply/200?type=IMAGE/SVG%2BXML;%20charset=utf-8&body=PNG", "IMAGE/SVG+XML; charset=utf-8"),
            ("/reply/200?type=application/octet-stream&body=PNG", "application/octet-stream"),
            ("/reply/200?type=binary/octet-stream&body=PNG", "binary/octet-stream"),
            ("/reply/200?body=PNG", nil),
        ])
    func storesAWholeImage(_ path: String, _ contentType: String?) async throws {
        try await withLoadStore { store, server throws in
            let url = server.url(path).absoluteString
            let image = try await store.images.load(url)
            #expect(image.data == Data("PNG".utf8))
            #expect(image.contentType == contentType)
            #expect(try await store.images.list().map(\.url) == [url])
        }
    }

    /// From the review: `HTTP://` passed the check, then failed as "unsupported URL", retried as
    /// a connection failure. The request goes to `http://`; the key stays as written.
    @Test func anUpperCaseSchemeIsFetchedAndKeptAsWritten() async throws {
        try await withLoadStore { store, server throws in
            try server.publish("img/a.png", Data("PNG".utf8))
            let url = server.url("/img/a.png").absoluteString.replacingOccurrences(of: "http://", with: "HTTP://")
            let image = try await store.images.load(url)
            #expect(image.url == url)
            #expect(image.data == Data("PNG".utf8))
            #expect(try await store.images.list().map(\.url) == [url])
            #expect(try await server.requests().map(\.path) == ["/img/a.png"])
        }
    }

    /// From the review: a load's entry evicted by other loads' inserts (or deleted, or pruned)
    /// between the pipeline's insert and the read after it made the load throw "no image with
    /// url" for the image it had just downloaded. Here a delete runs in between, for certain:
    /// the insert waits behind a held write, and the delete is queued after it.
    @Test func anImageGoneBetweenItsInsertAndTheReadIsStillReturned() async throws {
        try await withLoadStore { store, server throws in
            try server.publish("img/a.png", Data("PNG".utf8))
            let url = server.url("/img/a.png").absoluteString
            let held = await HeldWriter(store)
            let load = Task { try await store.images.load(url) }
            #expect(await eventually { store.writer.queuedWrites == 1 }) // the downloaded bytes' insert
            let delete = Task { try await store.images.delete(url) }
            try await held.release(once: 2)
            #expect(try await delete.value)
            let image = try await load.value
            #expect(image.url == url)
            #expect(image.data == Data("PNG".utf8))
            #expect(image.contentType == "image/png")
            #expect(try await store.images.list().isEmpty)
            #expect(try await server.requests().count == 1)
        }
    }

    /// The same race when the cache held the url: the load found it cached, and it was gone
    /// when read. It is downloaded again, once.
    @Test func anImageGoneBetweenTheCheckAndTheReadIsDownloadedAgain() async throws {
        try await withLoadStore { store, server throws in
            try server.publish("img/a.png", Data("PNG".utf8))
            let url = server.url("/img/a.png").absoluteString
            try await store.images.put(url, data: Data("old".utf8))
            let held = await HeldWriter(store)
            let delete = Task { try await store.images.delete(url) }
            #expect(await eventually { store.writer.queuedWrites == 1 })
            let load = Task { try await store.images.load(url) } // cached: its read queues behind the delete
            try await held.release(once: 2)
            #expect(try await delete.value)
            let image = try await load.value
            #expect(image.data == Data("PNG".utf8))
            #expect(try await store.images.get(url)?.data == Data("PNG".utf8))
            #expect(try await server.requests().map(\.path) == ["/img/a.png"])
        }
    }

    /// From the review: an image larger than the whole budget was downloaded in full, then
    /// refused, on every load. The download is capped at the budget: a Content-Length over it
    /// is refused before the body is read. A smaller `maximumBytes` still wins.
    @Test func aDownloadIsCappedAtTheBudget() async throws {
        try await withLoadStore(budget: 100) { store, server throws in
            try server.publish("img/big.png", Data(repeating: 7, count: 5000))
            let url = server.url("/img/big.png")
            let error = await #expect(throws: HTTPError.self) { try await store.images.load(url.absoluteString) }
            #expect(error == .tooLarge(url: url, limit: 100))
            let smaller = await #expect(throws: HTTPError.self) {
                try await store.images.load(url.absoluteString, maximumBytes: 50)
            }
            #expect(smaller == .tooLarge(url: url, limit: 50))
            #expect(try await store.images.list().isEmpty)
        }
    }

    /// From the review: load took keys `put` refuses (`a b`, `ü`: stored raw, they came back
    /// percent-encoded from an export or sync, as other keys). It refuses them as `put` does,
    /// before any request.
    @Test("load refuses the keys put refuses", arguments: ["/img/a b", "/img/\u{FC}.png"])
    func refusesTheKeysPutRefuses(_ path: String) async throws {
        try await withLoadStore { store, server throws in
            try server.publish(String(path.dropFirst()), Data("PNG".utf8))
            let url = server.baseURL.absoluteString + path
            let loaded = await #expect(throws: StoreError.self) { try await store.images.load(url) }
            let put = await #expect(throws: StoreError.self) { try await store.images.put(url, data: Data("PNG".utf8)) }
            #expect(loaded != nil && loaded == put)
            #expect(loaded == .invalidRecord(kind: .image, key: url, field: "url", reason: ImageTable.keyProblem(url) ?? ""))
            #expect(try await store.images.list().isEmpty)
            #expect(try await server.requests().isEmpty)
        }
    }

    /// A user name or password in the url would be kept in the key and listed (errors
    /// elsewhere leave them out): refused, and the error does not show them either.
    @Test func refusesAURLWithAUserOrPassword() async throws {
        try await withLoadStore { store, server throws in
            try server.publish("img/a.png", Data("PNG".utf8))
            let plain = server.url("/img/a.png").absoluteString
            for url in [
                plain.replacingOccurrences(of: "http://", with: "http://user:s3cret@"),
                plain.replacingOccurrences(of: "http://", with: "http://s3cret@"),
            ] {
                let error = await #expect(throws: StoreError.self) { try await store.images.load(url) }
                guard case .invalidRecord(.image, let key, "url", let reason) = error else {
                    Issue.record("\(String(describing: error))")
                    continue
                }
                #expect(key == plain)
                #expect(reason.contains("user name or password"))
                #expect(error.map(String.init(describing:))?.contains("s3cret") == false)
            }
            #expect(try await store.images.list().isEmpty)
            #expect(try await server.requests().isEmpty)
        }
    }

    /// From the review: `maximumBytes: -5` failed as "larger than the limit of -5 bytes" and a
    /// negative timeout as "timed out after -1 s", each after a request. Refused up front.
    @Test func refusesASizeCapOrTimeoutThatAllowsNothing() async throws {
        try await withLoadStore { store, server throws in
            try server.publish("img/a.png", Data("PNG".utf8))
            let url = server.url("/img/a.png").absoluteString
            for bytes in [0, -5] {
                let error = await #expect(throws: StoreError.self) { try await store.images.load(url, maximumBytes: bytes) }
                #expect(
                    error
                        == .invalidRecord(
                            kind: .image, key: url, field: "maximumBytes", reason: "must be at least 1 byte; got \(bytes)"))
            }
            for (timeout, shown) in [(Duration.zero, "0 s"), (.seconds(-1), "-1 s")] {
                let error = await #expect(throws: StoreError.self) { try await store.images.load(url, timeout: timeout) }
                #expect(
                    error
                        == .invalidRecord(
                            kind: .image, key: url, field: "timeout", reason: "must be longer than 0 s; got \(shown)"))
            }
            #expect(try await store.images.list().isEmpty)
            #expect(try await server.requests().isEmpty)
        }
    }
}
