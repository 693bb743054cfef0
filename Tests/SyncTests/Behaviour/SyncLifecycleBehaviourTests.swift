import Foundation
import Testing
@testable import Store

/// A sync's lifecycle: cancelled, recorded in the same transaction as its records, and keeping
/// the image cache's budget and the feed's content types.
@Suite(.timeLimit(.minutes(1)))
struct SyncLifecycleBehaviourTests {
    // MARK: Cancellation

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
                try db.execute("""
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

    // MARK: Images
}
