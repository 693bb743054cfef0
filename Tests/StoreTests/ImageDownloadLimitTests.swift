import Foundation
import Testing

@testable import Store

/// At most `ImagePipeline.maximumConcurrentDownloads` image downloads at once, whoever asks; each
/// holds its body in memory, so 100 distinct images asked for at once used to be 100 downloads.
@Suite("Image downloads: a bound on how many run at once", .timeLimit(.minutes(10)))
struct ImageDownloadLimitTests {
    @Test("30 loads of distinct URLs at once: every one is answered, never more than the bound in flight")
    func boundedConcurrency() async throws {
        let inFlight = LockedBox((now: 0, most: 0))
        var configuration = Store.Configuration()
        configuration.transport = HTTPTransport { request in
            inFlight.withLock {
                $0.now += 1; $0.most = max($0.most, $0.now)
            }
            defer { inFlight.withLock { $0.now -= 1 } }
            try await Task.sleep(for: .milliseconds(50))
            return HTTPResponse(
                url: request.url, status: 200, headers: ["content-type": "image/png"], body: Data(request.url.path.utf8))
        }
        try await withTemporaryStore(configuration: configuration) { store, _ throws in
            let images = try await withThrowingTaskGroup(of: CachedImage.self) { group in
                for index in 0..<30 { group.addTask { try await store.images.load("https://example.com/\(index).png") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(images.count == 30)
            #expect(Set(images.map(\.data)).count == 30)
            let most = inFlight.withLock { $0.most }
            #expect(most <= ImagePipeline.maximumConcurrentDownloads, "\(most) downloads at once")
            #expect(most > 1, "the downloads did not overlap at all")
        }
    }

    @Test("a load cancelled while it waits for its turn ends at once; the others finish")
    func cancelledWhileWaiting() async throws {
        let gate = LockedBox(false)
        var configuration = Store.Configuration()
        configuration.transport = HTTPTransport { request in
            while !gate.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
            return HTTPResponse(url: request.url, status: 200, headers: ["content-type": "image/png"], body: Data("x".utf8))
        }
        try await withTemporaryStore(configuration: configuration) { store, _ throws in
            let bound = ImagePipeline.maximumConcurrentDownloads
            let running = (0..<bound).map { index in
                Task { try await store.images.load("https://example.com/held-\(index).png") }
            }
            let downloads = await store.imagePipeline.downloads
            #expect(await eventually { await downloads.holders == bound }, "the first loads did not all start")
            let waiting = Task { try await store.images.load("https://example.com/waiting.png") }
            #expect(await eventually { await downloads.waiting == 1 }, "the last load did not queue")
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            gate.withLock { $0 = true }
            for task in running { _ = try await task.value }
            #expect(try await store.images.get("https://example.com/waiting.png") == nil)
            let (holders, queued) = (await downloads.holders, await downloads.waiting)
            #expect(holders == 0 && queued == 0)
        }
    }
}
