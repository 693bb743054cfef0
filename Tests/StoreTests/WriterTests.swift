import Foundation
import Testing

@testable import Store

@Suite("Writer")
struct WriterTests {
    private struct Abort: Error, Equatable {}

    @Test func rollsBackEverythingOfAWriteThatThrows() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("before"))
            await #expect(throws: Abort()) {
                try await store.write { db in
                    try db.frameworks.insert(Fixtures.framework("lost"))
                    try db.orders.insert(Fixtures.order("o-lost", prices: ["1"]))
                    try db.events.insert(Event(id: "e-lost", title: "Lost", date: Fixtures.date("2026-06-08")))
                    _ = try db.frameworks.delete("before")
                    throw Abort()
                }
            }
            #expect(try await store.frameworks.fetchAll().map(\.id) == ["before"])
            #expect(try await store.orders.count() == 0)
            #expect(try await store.events.count() == 0)
            #expect(try await store.read { try $0.integer("SELECT count(*) FROM order_items") } == 0)
            // The writer carries on.
            try await store.frameworks.insert(Fixtures.framework("after"))
            #expect(try await store.frameworks.count() == 2)
        }
    }

    @Test func returnsTheValueOfACommittedWrite() async throws {
        try await withTemporaryStore { store, _ throws in
            let changes = try await store.write { db in
                try db.frameworks.insert(Fixtures.framework("a"))
                try db.frameworks.insert(Fixtures.framework("b"))
                return try db.integer("SELECT count(*) FROM frameworks")
            }
            #expect(changes == 2)
        }
    }

    @Test func landsEveryOneOfManyConcurrentWrites() async throws {
        let tasks = 8, writesPerTask = 500
        try await withTemporaryStore { store, _ throws in
            try await writeConcurrently(store, tasks: tasks, writesPerTask: writesPerTask)
            #expect(try await store.frameworks.count() == tasks * writesPerTask)
            let expected = Set((0..<tasks).flatMap { task in (0..<writesPerTask).map { "t\(task)-\($0)" } })
            #expect(Set(try await store.frameworks.fetchAll().map(\.id)) == expected)
        }
    }

    @Test func failingWriteInAGroupFailsOnlyItself() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("taken", name: "Original"))
            // Hold the writer so the writes below queue up and commit together.
            let held = await HeldWriter(store)
            let outcomes = try await writeTenOneFailing(store) { try await held.release(once: tenIDsOneTaken.count) }
            try await expectOnlyTheDuplicateFailed(outcomes, in: store)
            #expect(try await store.frameworks.count() == 1 + 1 + tenIDsOneTaken.count - 1)
        }
    }

    @Test func readsDoNotWaitForAWriteInProgressNorSeeIt() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("committed"))
            let inserted = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            let write = Task {
                try await store.write { db -> Bool in
                    try db.frameworks.insert(Fixtures.framework("uncommitted"))
                    inserted.signal()
                    // Keep the transaction open until the test has read; true if it was told to go
                    // on, false if the reads never came back (they were waiting for this write).
                    return release.wait(timeout: .now() + 240) == .success
                }
            }
            #expect(await wait(for: inserted))
            let seen = try await store.frameworks.find("uncommitted")
            let count = try await store.frameworks.count()
            release.signal()
            let writeWasStillOpen = try await write.value

            #expect(writeWasStillOpen)
            #expect(seen == nil)
            #expect(count == 1)
            #expect(try await store.frameworks.find("uncommitted") != nil)
        }
    }

    @Test func readsRunConcurrentlyWithEachOther() async throws {
        try await withTemporaryStore { store, _ throws in
            // Two reads that each wait for the other: they finish only if they run at once.
            let first = DispatchSemaphore(value: 0), second = DispatchSemaphore(value: 0)
            async let a: Bool = store.read { _ in
                first.signal(); return second.wait(timeout: .now() + 240) == .success
            }
            async let b: Bool = store.read { _ in
                second.signal(); return first.wait(timeout: .now() + 240) == .success
            }
            let (bothA, bothB) = try await (a, b)
            #expect(bothA && bothB)
        }
    }

    @Test func closingRunsTheWritesRequestedBeforeAndRefusesLaterOnes() async throws {
        try await withTemporaryDirectory { directory throws in
            let store = try await Store.open(at: directory.databasePath)
            let held = await HeldWriter(store)
            let queued = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for number in 0..<5 {
                        group.addTask { try await store.frameworks.insert(Fixtures.framework("queued-\(number)")) }
                    }
                    try await group.waitForAll()
                }
            }
            // Asked to close while the 5 writes wait behind the held one.
            #expect(await eventually { store.writer.queuedWrites >= 5 })
            let closing = Task { await store.close() }
            try await held.release(once: 5)
            await closing.value
            try await queued.value
            await #expect(throws: StoreError.closed) { try await store.frameworks.insert(Fixtures.framework("late")) }

            try await withStore(at: directory.databasePath) { reopened throws in
                #expect(try await reopened.frameworks.count() == 1 + 5)
                #expect(try await reopened.frameworks.find("late") == nil)
            }
        }
    }

    @Test func refusesEveryCallOnceClosed() async throws {
        try await withTemporaryDirectory { directory throws in
            let store = try await Store.open(at: directory.databasePath)
            try await store.frameworks.insert(Fixtures.framework("a"))
            #expect(try await store.frameworks.count() == 1)
            await store.close()
            await #expect(throws: StoreError.closed) { try await store.frameworks.insert(Fixtures.framework("b")) }
            await #expect(throws: StoreError.closed) { try await store.frameworks.count() }
            await #expect(throws: StoreError.closed) { try await store.migrationStatus() }
            #expect(store.openReaderConnections == 0)
        }
    }
}
