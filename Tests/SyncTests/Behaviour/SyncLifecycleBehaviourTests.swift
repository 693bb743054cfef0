import Foundation
import Testing

@testable import Store

/// A sync's lifecycle: cancelled, recorded in the same transaction as its records, and keeping
/// the image cache's budget and the feed's content types.
@Suite(.timeLimit(.minutes(10)))
struct SyncLifecycleBehaviourTests {
    // MARK: Cancellation

    /// The feed's server stalls (headers and one byte, then nothing for 600 s): cancelling the
    /// task that awaits the sync ends it at once with CancellationError, and nothing is written,
    /// not even a history row.
    @Test func cancellingTheSyncTaskStopsAStalledDownload() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let requested = BehaviourLatch()
        let transport = HTTPTransport { request in
            await requested.open()
            return try await HTTPTransport.live.send(request)
        }
        try await withBehaviourStore(transport: transport) { store, _ in
            try await store.frameworks.insert(KindFixture.framework.framework("kept", 1))
            let before = try storeFileBytes(store)
            var options = SyncOptions()
            // Past the time bound below: only the cancellation can end the stalled download in time.
            options.timeout = .seconds(200)
            let stalled = options
            let url = server.url("/slow?seconds=600")
            let sync = Task { try await store.sync(from: .remote(url), options: stalled) }
            await requested.wait()
            let started = ContinuousClock.now
            sync.cancel()
            let result = await sync.result
            #expect(ContinuousClock.now - started < .seconds(180), "the stalled download went on after cancellation")
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(try storeFileBytes(store) == before)
            #expect(try await store.syncHistory().isEmpty)
            #expect(try await store.frameworks.fetchAll().map(\.id) == ["kept"])
        }
    }

    /// Two syncs of one source share a fetch: cancelling one ends it at once (the fetch is still
    /// held by the server), and the other goes on and applies the feed.
    @Test func cancellingOneOfTwoSyncsSharingAFetch() async throws {
        let url = "https://feeds.example/feed.json"
        let gate = GatedTransport(bodies: [url: Data(behaviourFeed(frameworks: [KindFixture.framework.json("f", 1)]).utf8)])
        try await withBehaviourStore(transport: gate.transport) { store, _ in
            let source = FeedSource.remote(URL(string: url)!)
            let cancelled = Task { try await store.sync(from: source) }
            let other = Task { try await store.sync(from: source) }
            await gate.requested.wait()
            // Should the cancelled sync wait for the shared fetch, the request is let go after
            // a while, so the test fails instead of hanging.
            let letGo = Locked(false)
            let fallback = Task {
                try await Task.sleep(for: .seconds(20))
                letGo.withLock { $0 = true }
                await gate.release.open()
            }
            cancelled.cancel()
            // Answered while the request is still held: it did not wait for the shared fetch.
            await #expect(throws: CancellationError.self) { try await cancelled.value }
            #expect(!letGo.current, "the cancelled sync waited for the shared fetch")
            fallback.cancel()
            await gate.release.open()
            let report = try await other.value
            #expect(report.frameworks.inserted == 1)
            #expect(try await store.frameworks.count() == 1)
            #expect(try await store.syncHistory().map(\.outcome) == [.applied])
        }
    }

    /// Cancelled while an image downloads (the records committed): the download stops, the
    /// image is reported as failed ("cancelled"), and the history says so.
    @Test func cancellingDuringImageDownloadsStopsThem() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let imageRequested = BehaviourLatch()
        let transport = HTTPTransport { request in
            if request.url.path == "/slow" { await imageRequested.open() }
            return try await HTTPTransport.live.send(request)
        }
        try await withBehaviourStore(transport: transport) { store, folder in
            let image = server.url("/slow?seconds=600").absoluteString
            let source = try folder.write(
                "feed.json",
                behaviourFeed(
                    frameworks: [KindFixture.framework.json("f", 1)], images: [imageJSON(image)]))
            var options = SyncOptions()
            // Past the time bound below: only the cancellation can end the stalled download in time.
            options.timeout = .seconds(200)
            let stalled = options
            let sync = Task { try await store.sync(from: source, options: stalled) }
            await imageRequested.wait()
            let started = ContinuousClock.now
            sync.cancel()
            let report = try await sync.value
            #expect(ContinuousClock.now - started < .seconds(180), "the stalled download went on after cancellation")
            #expect(report.frameworks.inserted == 1)
            #expect(report.images.failed == 1 && report.imageFailures.map(\.reason) == ["cancelled"])
            #expect(try await store.frameworks.count() == 1)
            #expect(try await store.images.list().isEmpty)
            let history = try await store.syncHistory()
            #expect(history.map(\.outcome) == [.appliedWithImageFailures])
            #expect(history.first?.reportJSON?.contains("cancelled") == true)
        }
    }

    /// Cancelled once every page is read, before its write transaction started: the
    /// transaction is never run.
    @Test func cancelledBeforeItsWriteTheSyncWritesNothing() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            let records = (0..<50).map { KindFixture.framework.json("f\($0)", 1) }
            let source = try folder.write("feed.json", behaviourFeed(frameworks: records))
            let before = try storeFileBytes(store)
            let task = Locked<Task<SyncReport, any Error>?>(nil)
            let started = BehaviourLatch()
            var options = SyncOptions()
            // Told once the page is read, before the write transaction: cancels its own task.
            options.progress = { progress in
                if case .fetchedPage = progress { task.withLock { $0?.cancel() } }
            }
            let cancelling = options
            let sync = Task {
                await started.wait()
                return try await store.sync(from: source, options: cancelling)
            }
            task.withLock { $0 = sync }
            await started.open()
            await #expect(throws: CancellationError.self) { try await sync.value }
            #expect(try await store.frameworks.count() == 0)
            #expect(try await store.syncHistory().isEmpty)
            #expect(try storeFileBytes(store) == before)
        }
    }

    /// `store.write` from a cancelled task is not run; one already running checks for
    /// cancellation where it loops (`db.checkCancellation()`) and is rolled back.
    @Test func writesHonourCancellation() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, _ in
            let notStarted = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                try await store.frameworks.insert(KindFixture.framework.framework("never", 1))
            }
            await #expect(throws: CancellationError.self) { try await notStarted.value }
            let reading = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await store.frameworks.count()
            }
            await #expect(throws: CancellationError.self) { try await reading.value }

            let inserted = BehaviourLatch()
            let cancelled = DispatchSemaphore(value: 0)
            let running = Task {
                try await store.write { db in
                    try db.frameworks.insert(KindFixture.framework.framework("first", 1))
                    Task { await inserted.open() }
                    // Blocks the writer until the test has cancelled this task.
                    cancelled.wait()
                    try db.checkCancellation()
                    try db.frameworks.insert(KindFixture.framework.framework("second", 1))
                }
            }
            await inserted.wait()
            running.cancel()
            cancelled.signal()
            await #expect(throws: CancellationError.self) { try await running.value }
            #expect(try await store.frameworks.count() == 0)
            // The writer goes on with the next write.
            try await store.frameworks.insert(KindFixture.framework.framework("after", 1))
            #expect(try await store.frameworks.fetchAll().map(\.id) == ["after"])
        }
    }

    // MARK: History

    /// The history row of a successful sync is committed in the same transaction as its
    /// records: when the row cannot be written, the records are not applied either (a temporary
    /// trigger on this connection refuses every history row but a failure's).
    @Test func theHistoryRowIsCommittedWithTheRecords() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            let source = try folder.write("feed.json", behaviourFeed(frameworks: [KindFixture.framework.json("f", 1)]))
            try await store.write { db in
                try db.execute(
                    """
                    CREATE TEMP TRIGGER refuse_history BEFORE INSERT ON main.sync_history WHEN NEW.outcome <> 'failed'
                    BEGIN SELECT RAISE(ABORT, 'history refused'); END
                    """)
            }
            let error = await behaviourError { try await store.sync(from: source) }
            #expect(String(describing: error).contains("history refused"))
            let applied = try await store.frameworks.count()
            let rows = try await store.syncHistory()
            #expect(applied == 0, "the records were committed without their history row")
            #expect(rows.map(\.outcome) == [.failed])

            try await store.write { db in try db.execute("DROP TRIGGER temp.refuse_history") }
            _ = try await store.sync(from: source)
            #expect(try await store.frameworks.count() == 1)
            #expect(try await store.syncHistory().map(\.outcome) == [.applied, .failed])
        }
    }

    /// What a failed sync changes, precisely: one `sync_history` row (by design); every other
    /// table (records, sync state, change log, images, migrations) stays byte-identical.
    @Test func aFailedSyncAddsItsHistoryRowAndChangesNothingElse() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            let base = try folder.write(
                "base.json",
                behaviourFeed(
                    frameworks: [KindFixture.framework.json("fw", 1)], orders: [KindFixture.order.json("or", 1)],
                    events: [KindFixture.event.json("ev", 1)],
                    images: [imageJSON("https://example.com/i.png", data: Data([1, 2, 3]), contentType: "image/png")]))
            _ = try await store.sync(from: base, options: SyncOptions(policy: .threeWay))
            // Valid records first, so the reconciler has applied some before the problem is found.
            let records =
                (0..<200).map { KindFixture.framework.json("new-\($0)", 1) } + [KindFixture.framework.json("fw", 2)]
                + [.object([JSONMember("id", .string("bad"))])]
            let refused = try folder.write("refused.json", behaviourFeed(frameworks: records, deleted: [.event: ["ev"]]))

            @Sendable func everythingButHistory(_ db: Database) throws -> [String: [Row]] {
                let tables = try db.fetchAll("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                var rows: [String: [Row]] = [:]
                for table in tables {
                    guard case .text(let name) = table[0], name != "sync_history" else { continue }
                    let all = try db.fetchAll("SELECT * FROM \"\(name)\"")
                    rows[name] = name == "sqlite_sequence" ? all.filter { $0["name"] != .text("sync_history") } : all
                }
                return rows
            }
            let before = try await store.read(everythingButHistory)
            let historyBefore = try await store.syncHistory()
            _ = await behaviourError { try await store.sync(from: refused, options: SyncOptions(policy: .preferRemote)) }
            _ = await behaviourError { try await store.sync(from: .remote(URL(string: "http://127.0.0.1:9/feed.json")!)) }
            #expect(try await store.read(everythingButHistory) == before)
            let history = try await store.syncHistory()
            #expect(history.count == historyBefore.count + 2)
            #expect(history.prefix(2).allSatisfy { $0.outcome == .failed })
        }
    }

    // MARK: Images

    /// A downloaded image keeps the feed's contentType when it gives one, else the response's.
    @Test func downloadedImagesKeepTheFeedsContentType() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let typed = try server.publish("img/a.bin", data: Data("webp-bytes".utf8))
        let untyped = try server.publish("img/b.bin", data: Data("other-bytes".utf8))
        try await withBehaviourStore { store, folder in
            let source = try folder.write(
                "feed.json",
                behaviourFeed(images: [
                    imageJSON(typed.absoluteString, contentType: "image/webp"), imageJSON(untyped.absoluteString),
                ]))
            let report = try await store.sync(from: source)
            #expect(report.images.downloaded == 2, "\(report.imageFailures)")
            #expect(try await store.images.get(typed.absoluteString)?.contentType == "image/webp")
            #expect(try await store.images.get(untyped.absoluteString)?.contentType == "application/octet-stream")
        }
    }

    /// The store's budget holds for sync: an inline image larger than the whole budget is not
    /// stored and is reported; the records are still applied.
    @Test func anImageLargerThanTheBudgetIsReportedNotStored() async throws {
        let folder = try BehaviourFolder()
        defer { folder.remove() }
        var configuration = behaviourConfiguration(transport: .unimplemented)
        configuration.imageCacheBudget = 3000
        let store = try await Store.open(at: folder.file("store.sqlite").path, configuration: configuration)
        let source = try folder.write(
            "feed.json",
            behaviourFeed(
                frameworks: [KindFixture.framework.json("f", 1)],
                images: [
                    imageJSON("https://example.com/small.png", data: Data(count: 1000)),
                    imageJSON("https://example.com/huge.png", data: Data(count: 6249)),
                ]))
        let report = try await store.sync(from: source)
        #expect(report.frameworks.inserted == 1)
        #expect(report.images.stored == 1 && report.images.failed == 1)
        #expect(report.imageFailures.map(\.url) == ["https://example.com/huge.png"])
        #expect(report.imageFailures.first?.reason.contains("budget of 3000 bytes") == true)
        #expect(try await store.images.list().map(\.url) == ["https://example.com/small.png"])
        await store.close()
    }
}
