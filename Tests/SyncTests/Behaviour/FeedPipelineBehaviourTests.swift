import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// Sync reads, checks, decodes and hashes the feed on a reader thread of its own while the
/// writer's thread applies it (`FeedPipeline`): the records are applied in feed order, and
/// whichever side fails, the other stops, the reader is waited for, and nothing is left.
@Suite(.timeLimit(.minutes(10)))
struct FeedPipelineBehaviourTests {
    /// Frameworks `f<first>`... in a scrambled (not key) order, more than a batch.
    static func frameworks(_ range: Range<Int>) -> [String] { range.map { "f\(($0 * 7919) % 100_000)" } }

    /// Writes a local feed of `pages` (each framework ids, event ids, tombstoned framework ids),
    /// linked by `next`; returns its first page as a source.
    static func writeFeed(
        _ pages: [(frameworks: [String], events: [String], deleted: [String])], in folder: BehaviourFolder,
        lastFrameworkOf last: JSONValue? = nil
    ) throws -> FeedSource {
        var first: FeedSource?
        for (index, page) in pages.enumerated() {
            var frameworks = page.frameworks.map { KindFixture.framework.json($0, 1) }
            if index == pages.count - 1, let last { frameworks.append(last) }
            let source = try folder.write(
                "page-\(index + 1).json",
                behaviourFeed(
                    frameworks: frameworks, events: page.events.map { KindFixture.event.json($0, 1) },
                    deleted: page.deleted.isEmpty ? [:] : [.framework: page.deleted],
                    next: index + 1 < pages.count ? "page-\(index + 2).json" : nil))
            first = first ?? source
        }
        return first!
    }

    /// How many pipeline readers are running for `store`'s writer connection.
    static func liveReaders(_ store: Store) async throws -> Int {
        try await store.write { db in FeedPipeline.liveReaders(applyingTo: db) }
    }

    @Test func recordsAreAppliedInFeedOrderAcrossPagesAndBatches() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            let doomed = ["old-1", "old-2", "old-3"]
            for id in doomed { try await KindFixture.framework.insert(id, 1, into: store) }
            // Every insert and delete, in the order SQLite saw them (a temporary table and
            // triggers on the writer's own connection).
            try await store.write { db in
                try db.execute("CREATE TEMP TABLE applied (seq INTEGER PRIMARY KEY, what TEXT NOT NULL)")
                for (table, tag) in [("frameworks", "f"), ("events", "e")] {
                    try db.execute(
                        """
                        CREATE TEMP TRIGGER log_insert_\(table) AFTER INSERT ON main.\(table)
                        BEGIN INSERT INTO applied (what) VALUES ('+\(tag):' || NEW.id); END
                        """)
                    try db.execute(
                        """
                        CREATE TEMP TRIGGER log_delete_\(table) AFTER DELETE ON main.\(table)
                        BEGIN INSERT INTO applied (what) VALUES ('-\(tag):' || OLD.id); END
                        """)
                }
            }
            let pages = [
                (frameworks: Self.frameworks(0..<700), events: ["e1", "e2"], deleted: ["old-2"]),
                (frameworks: Self.frameworks(700..<1_000), events: (3..<600).map { "e\($0)" }, deleted: []),
                (frameworks: Self.frameworks(1_000..<1_900), events: [], deleted: ["old-3", "old-1"]),
            ]
            let source = try Self.writeFeed(pages, in: folder)
            // Prefer-remote deletes what the feed deletes, though it was not received from it.
            let report = try await store.sync(from: source, options: SyncOptions(policy: .preferRemote))

            var expected: [String] = []
            for page in pages {
                expected += page.frameworks.map { "+f:\($0)" } + page.events.map { "+e:\($0)" }
                expected += page.deleted.map { "-f:\($0)" }
            }
            let applied = try await store.write { db in
                try db.query("SELECT what FROM applied ORDER BY seq") { $0.text(0) }
            }
            #expect(applied.count == expected.count)
            let firstDifference = zip(applied, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(firstDifference == nil, "first difference at \(firstDifference ?? -1)")
            #expect(report.frameworks.inserted == 1_900 && report.frameworks.deleted == 3)
            #expect(report.events.inserted == 599)
            #expect(try await Self.liveReaders(store) == 0)
        }
    }

    /// A SQLite error partway (a trigger refuses the 1,500th record; the reader is batches
    /// ahead, on a later page): the sync fails with it, the reader is stopped and waited for
    /// before the sync returns, and nothing of the feed is left. Repeated, no reader is left
    /// running.
    @Test func anErrorWhileApplyingStopsTheReaderAndRollsBack() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try await KindFixture.framework.insert("kept", 1, into: store)
            let ids = Self.frameworks(0..<6_000)
            let source = try Self.writeFeed(
                [(Array(ids[..<1_000]), [], []), (Array(ids[1_000..<3_000]), [], []), (Array(ids[3_000...]), [], [])],
                in: folder)
            try await store.write { db in
                try db.execute(
                    """
                    CREATE TEMP TRIGGER refuse BEFORE INSERT ON main.frameworks WHEN NEW.id = '\(ids[1_499])'
                    BEGIN SELECT RAISE(ABORT, 'refused by the test'); END
                    """)
            }
            for attempt in 1...10 {
                let error = await behaviourError { try await store.sync(from: source) }
                #expect(String(describing: error).contains("refused by the test"), "attempt \(attempt): \(error)")
                #expect(try await Self.liveReaders(store) == 0, "attempt \(attempt)")
            }
            #expect(try await store.frameworks.fetchAll().map(\.id) == ["kept"])
            #expect(try await store.syncHistory().map(\.outcome) == Array(repeating: .failed, count: 10))
            try await store.write { db in try db.execute("DROP TRIGGER temp.refuse") }
            let report = try await store.sync(from: source)
            #expect(report.frameworks.inserted == 6_000)
        }
    }

    /// The reader fails to read the second page (a folder, read as a file: the read itself
    /// fails) after the first page's batches were applied: the error names that page and
    /// the transaction is rolled back.
    @Test func aPageThatCannotBeReadRollsBackAndIsNamed() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            let first = try folder.write(
                "page-1.json", behaviourFeed(frameworks: Self.frameworks(0..<1_200).map { KindFixture.framework.json($0, 1) }))
            guard case .file(let firstURL) = first else { Issue.record("not a file source"); return }
            let unreadable = folder.file("page-2.json")
            try FileManager.default.createDirectory(at: unreadable, withIntermediateDirectories: true)
            let readerNames = Locked<[String?]>([])
            let error = await behaviourError {
                try await store.write { db in
                    var reconciler = try Reconciler(
                        db: db, source: "pipeline-test", validators: nil, policy: .preferRemote, imageBudget: 1 << 20,
                        now: behaviourNow, status: .applied)
                    _ = try FeedPipeline.run(into: &reconciler) { sink in
                        // Where the reader runs: its own thread, named for it (the system's name too).
                        var names = [Thread.current.name]
                        #if os(Linux)
                            // The kernel's name. A read of /proc can fail for a signal that
                            // interrupts it (SIGCHLD from the suite's processes): tried again.
                            var comm: String?
                            for _ in 0..<5 where comm == nil {
                                comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
                            }
                            // Unreadable five times (seen once, in a full run on a loaded
                            // machine): the thread's own name above still counts.
                            if let comm { names.append(comm) }
                        #endif
                        readerNames.withLock { $0 = names }
                        var validator = FeedValidator()
                        try validator.add(file: firstURL, source: "page-1.json", pageURL: firstURL, into: &sink)
                        try validator.add(file: unreadable, source: "page-2.json", pageURL: unreadable, into: &sink)
                        try validator.finish()
                        return validator.recordCount
                    }
                    try reconciler.finish()
                }
            }
            guard case .unreadable(let path, _)? = error as? FeedSourceError else {
                Issue.record("expected an unreadable page, got \(error)")
                return
            }
            #expect(path == "page-2.json")
            #expect(readerNames.current.allSatisfy { $0?.hasPrefix(FeedPipeline.threadName) == true }, "\(readerNames.current)")
            #expect(!readerNames.current.isEmpty)
            #expect(try await store.frameworks.count() == 0)
            #expect(try await Self.liveReaders(store) == 0)
        }
    }

    /// The sync's task is cancelled while the reader is on the second page (it cancels it
    /// itself, so the moment is known): the writer stops at its next record, the reader is
    /// stopped and waited for, and the store is as it was.
    @Test func cancellingMidSyncLeavesTheStoreUnchanged() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try await KindFixture.framework.insert("kept", 1, into: store)
            let pages = [Self.frameworks(0..<1_000), Self.frameworks(1_000..<2_000), Self.frameworks(2_000..<3_000)]
            let files = try pages.enumerated().map { index, ids in
                let source = try folder.write(
                    "page-\(index + 1).json", behaviourFeed(frameworks: ids.map { KindFixture.framework.json($0, 1) }))
                guard case .file(let url) = source else { throw FeedSourceError.invalid("page", reason: "not a file") }
                return url
            }
            let before = try storeFileBytes(store)
            let task = Locked<Task<Int, any Error>?>(nil)
            let readerEnded = Locked(false)
            let started = BehaviourLatch()
            let sync = Task {
                await started.wait()
                return try await store.write { db in
                    var reconciler = try Reconciler(
                        db: db, source: "pipeline-test", validators: nil, policy: .preferRemote, imageBudget: 1 << 20,
                        now: behaviourNow, status: .applied)
                    let count = try FeedPipeline.run(into: &reconciler) { sink in
                        defer {
                            // Slow to end once stopped: `run` must wait for it all the same.
                            Thread.sleep(forTimeInterval: 0.3)
                            readerEnded.withLock { $0 = true }
                        }
                        var validator = FeedValidator()
                        for (index, file) in files.enumerated() {
                            if index == 1 { task.withLock { $0?.cancel() } }
                            try validator.add(file: file, source: file.lastPathComponent, pageURL: file, into: &sink)
                        }
                        try validator.finish()
                        return validator.recordCount
                    }
                    try reconciler.finish()
                    return count
                }
            }
            task.withLock { $0 = sync }
            await started.open()
            await #expect(throws: CancellationError.self) { try await sync.value }
            #expect(readerEnded.current, "the write returned before its reader ended")
            #expect(try await store.frameworks.fetchAll().map(\.id) == ["kept"])
            #expect(try await Self.liveReaders(store) == 0)
            #expect(try storeFileBytes(store) == before)
        }
    }

    /// A problem in the last record of the last page, after thousands of records were applied:
    /// the sync fails with that problem, named by its page and path, and nothing is left.
    @Test func aProblemLateInTheFeedLeavesNothing() async throws {
        try await withBehaviourStore(transport: .unimplemented) { store, folder in
            try await KindFixture.framework.insert("kept", 1, into: store)
            let broken = JSONValue.object([
                JSONMember("id", .string("broken")), JSONMember("name", .integer(3)),
                JSONMember("imageName", .string("i")), JSONMember("urlString", .string("u")),
                JSONMember("description", .string("d")),
            ])
            let source = try Self.writeFeed(
                [
                    (Self.frameworks(0..<1_500), ["e1"], []), (Self.frameworks(1_500..<3_000), [], ["kept"]),
                ],
                in: folder, lastFrameworkOf: broken)
            let error = await behaviourError { try await store.sync(from: source) }
            guard let validation = error as? FeedValidationError else {
                Issue.record("expected a validation error, got \(error)")
                return
            }
            #expect(validation.problems.count == 1)
            #expect(validation.problems.first?.source.hasSuffix("page-2.json") == true, "\(validation)")
            #expect(validation.problems.first?.path == "frameworks[1500].name", "\(validation)")
            #expect(try await store.frameworks.fetchAll().map(\.id) == ["kept"])
            #expect(try await store.events.count() == 0)
            #expect(try await store.syncHistory().map(\.outcome) == [.failed])
            #expect(try await Self.liveReaders(store) == 0)
        }
    }
}
