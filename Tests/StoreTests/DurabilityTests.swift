import Foundation
import Testing

@testable import Store

/// `Store.Configuration.durability`: the sync mode actually in force on the connection that
/// commits, read through the store's own write path (the writer connection).
@Suite("Durability")
struct DurabilityTests {
    private static func configuration(_ durability: Store.Durability) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.durability = durability
        return configuration
    }

    /// `PRAGMA synchronous` on the writer connection: 1 is NORMAL, 2 is FULL.
    private static func writerSynchronous(_ store: Store) async throws -> Int64? {
        try await store.write { try $0.integer("PRAGMA synchronous") }
    }

    @Test func defaultIsFull() {
        #expect(Store.Configuration().durability == .full)
    }

    @Test(
        "each mode sets synchronous on the writer connection, in WAL mode",
        arguments: [
            (Store.Durability.normal, Int64(1)), (Store.Durability.full, Int64(2)),
        ])
    func writerConnectionUsesTheMode(durability: Store.Durability, synchronous: Int64) async throws {
        try await withTemporaryStore(configuration: Self.configuration(durability)) { store, _ throws in
            #expect(try await Self.writerSynchronous(store) == synchronous)
            #expect(try await store.write { try $0.fetchOne("PRAGMA journal_mode")?[0].textValue } == "wal")
            // Writes still commit and read back.
            try await store.frameworks.insert(Fixtures.framework("durable"))
            #expect(try await store.frameworks.count() == 1)
        }
    }

    @Test("the mode belongs to the opening store, not to the file: reopening with another mode uses that one")
    func modeIsPerOpen() async throws {
        try await withTemporaryDirectory { directory throws in
            let path = directory.databasePath
            try await withStore(at: path, configuration: Self.configuration(.full)) { store throws in
                #expect(try await Self.writerSynchronous(store) == 2)
            }
            try await withStore(at: path, configuration: Self.configuration(.normal)) { store throws in
                #expect(try await Self.writerSynchronous(store) == 1)
            }
            try await withStore(at: path) { store throws in
                #expect(try await Self.writerSynchronous(store) == 2)
            }
        }
    }

    @Test("group commit still groups concurrent writes under .full")
    func groupCommitUnderFull() async throws {
        try await withTemporaryStore(configuration: Self.configuration(.full)) { store, _ throws in
            let held = await HeldWriter(store)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<8 {
                    group.addTask { try await store.frameworks.insert(Fixtures.framework("full-\(number)")) }
                }
                try await held.release(once: 8)
                try await group.waitForAll()
            }
            #expect(try await store.frameworks.count() == 1 + 8)
            // The holder's transaction, then one for the 8 writes queued behind it.
            #expect(try await store.read { try $0.integer("SELECT count(*) FROM change_log") } == 2)
        }
    }

    /// Under `.full` a batch waits a moment for the writers the last batch answered. Writers
    /// that stop coming back (fewer tasks, then one, then none) are not waited for forever, a
    /// failing write among gathered ones still fails alone, and closing during a burst ends.
    @Test("gathering batches under .full: fewer writers than the last batch, a lone writer, a failure, a close")
    func gatheringNeverStrandsAWrite() async throws {
        try await withTemporaryStore(configuration: Self.configuration(.full)) { store, _ throws in
            try await writeConcurrently(store, tasks: 8, writesPerTask: 30)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<3 {
                    group.addTask {
                        for number in 0..<20 { try await store.frameworks.insert(Fixtures.framework("few-\(task)-\(number)")) }
                    }
                }
                try await group.waitForAll()
            }
            for number in 0..<5 { try await store.frameworks.insert(Fixtures.framework("lone-\(number)")) }
            #expect(try await store.frameworks.count() == 8 * 30 + 3 * 20 + 5)
            try await store.frameworks.insert(Fixtures.framework("taken", name: "Original"))
            let outcomes = try await writeTenOneFailing(store)
            try await expectOnlyTheDuplicateFailed(outcomes, in: store)
        }
        try await withTemporaryDirectory { directory throws in
            let store = try await Store.open(at: directory.databasePath, configuration: Self.configuration(.full))
            let burst = Task { try? await writeConcurrently(store, tasks: 8, writesPerTask: 50) }
            try await store.frameworks.insert(Fixtures.framework("before-close"))
            await store.close()
            await burst.value
            await #expect(throws: StoreError.self) { try await store.frameworks.insert(Fixtures.framework("after-close")) }
        }
    }

    /// Once a burst is over the writer goes idle and expects nothing: the next lone write is
    /// committed at once, not held for the burst's writers.
    @Test("after a burst under .full the writer forgets the burst: a lone write is not held")
    func aBurstIsForgottenOnceIdle() async throws {
        try await withTemporaryStore(configuration: Self.configuration(.full)) { store, _ throws in
            try await writeConcurrently(store, tasks: 8, writesPerTask: 20)
            // The drain that answered the burst's last writes still holds the actor; this waits
            // for it to end (nothing more comes), so it sees what the next write would meet.
            #expect(await store.writer.gatheringGoal == 0)
            try await store.frameworks.insert(Fixtures.framework("lone"))
            #expect(await store.writer.gatheringGoal == 0)
            #expect(try await store.frameworks.count() == 8 * 20 + 1)
        }
    }

    /// A gathering batch begins its transaction before its first write comes. When none comes
    /// (the burst is over), that transaction must end: another connection can then take the
    /// write lock at once, and the writer still writes.
    @Test("after a burst under .full the writer holds no transaction: another connection writes at once")
    func noTransactionIsLeftOpenAfterABurst() async throws {
        try await withTemporaryDirectory { directory throws in
            let store = try await Store.open(at: directory.databasePath, configuration: Self.configuration(.full))
            try await writeConcurrently(store, tasks: 8, writesPerTask: 20)
            var options = Database.OpenOptions()
            options.busyTimeout = .milliseconds(200)
            let other = try Database(path: directory.databasePath, options: options)
            // The writer's wait for writers that stopped coming lasts at most 5 ms; tries for
            // minutes all the same (a loaded machine may not run the writer's thread for seconds).
            var took = false
            for _ in 0..<600 where !took {
                took = (try? other.execute("BEGIN IMMEDIATE TRANSACTION")) != nil
                if !took { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(took)
            if took {
                try other.execute(
                    "INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES ('other', 'Other', 'o', 'https://example.com', 'd')"
                )
                try other.execute("COMMIT TRANSACTION")
            }
            other.close()
            try await store.frameworks.insert(Fixtures.framework("after"))
            #expect(try await store.frameworks.count() == 8 * 20 + (took ? 2 : 1))
            await store.close()
        }
    }

    /// A gathering batch begins before a write comes. With another process holding the write
    /// lock that early BEGIN used to wait the busy timeout (a minute) with nothing to stop it: a
    /// write cancelled meanwhile was answered, but `close()` waited behind it. It now does not
    /// wait; the batch waits for the lock only once it holds writes, and stops when they are
    /// cancelled. The other connection keeps the lock until the close has returned (or 240 s:
    /// the store's busy timeout is 600 s here, so a close that waited it out still fails, and a
    /// loaded machine has minutes).
    @Test("a gathering batch's early BEGIN never waits for another process's lock: close() returns while it is held")
    func earlyBeginDoesNotWaitForTheLock() async throws {
        try await withTemporaryDirectory { directory throws in
            var configuration = Self.configuration(.full)
            configuration.busyTimeout = .seconds(600)
            let store = try await Store.open(at: directory.databasePath, configuration: configuration)
            var options = Database.OpenOptions()
            options.busyTimeout = .milliseconds(100)
            let other = try Database(path: directory.databasePath, options: options)
            try other.execute("BEGIN IMMEDIATE TRANSACTION")
            await store.writer.expectWritesForTesting(8)
            let write = Task { try await store.frameworks.insert(Fixtures.framework("waits")) }
            try await Task.sleep(for: .milliseconds(200)) // the drain is under way (ordering only)
            write.cancel()
            await #expect(throws: CancellationError.self) { try await write.value }
            let closed = LockedBox(false)
            let closing = Task {
                await store.close()
                closed.withLock { $0 = true }
            }
            for _ in 0..<4_800 where !closed.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(50)) }
            #expect(closed.withLock { $0 }, "close() returned while another connection held the write lock")
            try other.execute("ROLLBACK TRANSACTION")
            other.close()
            await closing.value
            let reopened = try await Store.open(at: directory.databasePath)
            #expect(try await reopened.frameworks.count() == 0)
            await reopened.close()
        }
    }
}
