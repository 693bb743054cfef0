import Foundation
import Testing

@testable import Store

/// `store.observe(_:)` and its per-kind shorthands (`frameworks.observeAll()`,
/// `frameworks.observe(id:)`, `events.observe(month:)`), on real SQLite files, point by point
/// through the protocol: first value, emissions after commits, none for rollbacks, no repeats,
/// coalescing, ending, releasing, and changes from other connections and processes.
@Suite("Value observation", .timeLimit(.minutes(10)))
struct ValueObservationTests {
    struct Rollback: Error {}

    // MARK: First value

    @Test func emitsTheCurrentValueFirst() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert([Fixtures.framework("b"), Fixtures.framework("a")])
            try await store.events.insert(ObservationFixtures.event("june", on: "2026-06-08"))
            try await store.events.insert(ObservationFixtures.event("july", on: "2026-07-01"))

            let all = StreamProbe(store.frameworks.observeAll())
            let one = StreamProbe(store.frameworks.observe(id: "a"))
            let missing = StreamProbe(store.frameworks.observe(id: "nope"))
            let june = StreamProbe(store.events.observe(month: Fixtures.month("2026-06")))

            #expect(try await all.next().map(\.id) == ["a", "b"])
            #expect(try await one.next() == Fixtures.framework("a"))
            #expect(try await missing.next() == .some(nil))
            #expect(try await june.next().map(\.id) == ["june"])
        }
    }

    @Test func emitsTheCurrentValueFirstEvenWhenNothingEverChanges() async throws {
        try await withTemporaryStore { store, _ throws in
            let all = StreamProbe(store.frameworks.observeAll())
            #expect(try await all.next() == [])
            #expect(try await all.untakenAfterWaiting(0.3).isEmpty)
        }
    }

    // MARK: Emissions after commits

    @Test func emitsAfterEachCommittedTransactionThatChangesTheValue() async throws {
        try await withTemporaryStore { store, _ throws in
            let all = StreamProbe(store.frameworks.observeAll())
            #expect(try await all.next() == [])

            try await store.frameworks.insert(Fixtures.framework("a"))
            #expect(try await all.next().map(\.id) == ["a"])

            try await store.frameworks.insert(Fixtures.framework("b"))
            #expect(try await all.next().map(\.id) == ["a", "b"])

            try await store.frameworks.update(Fixtures.framework("a", name: "Renamed"))
            #expect(try await all.next().map(\.name) == ["Renamed", "Name of b"])

            try await store.frameworks.delete("b")
            #expect(try await all.next() == [Fixtures.framework("a", name: "Renamed")])
        }
    }

    @Test func observingOneRecordFollowsItsInsertUpdateAndDelete() async throws {
        try await withTemporaryStore { store, _ throws in
            let one = StreamProbe(store.frameworks.observe(id: "a"))
            #expect(try await one.next() == .some(nil))
            try await store.frameworks.insert(Fixtures.framework("a"))
            #expect(try await one.next() == Fixtures.framework("a"))
            try await store.frameworks.update(Fixtures.framework("a", name: "New"))
            #expect(try await one.next()?.name == "New")
            try await store.frameworks.delete("a")
            #expect(try await one.next() == .some(nil))
        }
    }

    @Test func observingAMonthFollowsEventsMovingInAndOut() async throws {
        try await withTemporaryStore { store, _ throws in
            let june = StreamProbe(store.events.observe(month: Fixtures.month("2026-06")))
            #expect(try await june.next() == [])

            try await store.events.insert(ObservationFixtures.event("e", on: "2026-05-31"))
            try await store.events.insert(ObservationFixtures.event("f", on: "2026-06-30"))
            #expect(try await june.next().map(\.id) == ["f"])

            // Moving an event into the month from another one changes the value.
            try await store.events.update(ObservationFixtures.event("e", on: "2026-06-01"))
            #expect(try await june.next().map(\.id) == ["e", "f"])

            // ... and moving it out again too (its old date is in the month).
            try await store.events.update(ObservationFixtures.event("e", on: "2026-07-01"))
            #expect(try await june.next().map(\.id) == ["f"])

            try await store.events.delete("f")
            #expect(try await june.next() == [])
        }
    }

    // MARK: Rolled-back writes

    @Test func neverEmitsForARolledBackWrite() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("a"))
            let all = StreamProbe(store.frameworks.observeAll())
            #expect(try await all.next().map(\.id) == ["a"])

            let failed = await outcome {
                try await store.write { db in
                    try db.frameworks.insert(Fixtures.framework("rolled-back"))
                    throw Rollback()
                }
            }
            #expect(throws: Rollback.self) { try failed.get() }
            #expect(try await all.untakenAfterWaiting(0.5).isEmpty)

            // The next emission is the next committed change, without the rolled-back record.
            try await store.frameworks.insert(Fixtures.framework("b"))
            #expect(try await all.next().map(\.id) == ["a", "b"])
            #expect(
                try await store.read { try ChangeLogTable(db: $0).batches(after: 0) }.flatMap(\.changes).map(\.key) == ["a", "b"])
        }
    }

    @Test func aFailedWriteGroupCommittedWithASuccessfulOneIsNotReported() async throws {
        try await withTemporaryStore { store, _ throws in
            let one = StreamProbe(store.frameworks.observe(id: "bad"))
            let changes = StreamProbe(store.changes(of: [.framework]))
            #expect(try await one.next() == .some(nil))
            #expect(await eventually { store.observerCount == 2 })

            // Hold the writer so that the next two writes queue up and share one transaction.
            let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            let hold = Task {
                try await store.write { _ in
                    holding.signal(); _ = release.wait(timeout: .now() + 240)
                }
            }
            #expect(await wait(for: holding))
            let bad = Task {
                try await store.write { db in
                    try db.frameworks.insert(Fixtures.framework("bad"))
                    throw Rollback()
                }
            }
            let good = Task { try await store.frameworks.insert(Fixtures.framework("good")) }
            // Both wait behind the held write, so they share its successor's transaction.
            #expect(await eventually { store.writer.queuedWrites == 2 })
            release.signal()
            try await withObservationDeadline(5, "the writes") {
                try await hold.value
                await #expect(throws: Rollback.self) { try await bad.value }
                try await good.value
            }

            let batch = try await changes.next()
            #expect(batch.changes == [Change(kind: .framework, key: "good", operation: .insert)])
            #expect(try await store.frameworks.find("bad") == nil)
            #expect(try await one.untakenAfterWaiting(0.4).isEmpty)
            #expect(try await changes.untakenAfterWaiting(0).isEmpty)
        }
    }

    // MARK: No repeats

    @Test func doesNotRepeatAnIdenticalValue() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("a"))
            let one = StreamProbe(store.frameworks.observe(id: "a"))
            let all = StreamProbe(store.frameworks.observeAll())
            #expect(try await one.next() == Fixtures.framework("a"))
            #expect(try await all.next() == [Fixtures.framework("a")])

            // A logged update that writes the same values: refetched, equal, not emitted.
            try await store.frameworks.update(Fixtures.framework("a"))
            // A change to another id, and changes to other kinds.
            try await store.frameworks.insert(Fixtures.framework("other"))
            try await store.events.insert(ObservationFixtures.event("e", on: "2026-06-08"))
            try await store.orders.insert(Fixtures.order("o", prices: ["1.00"]))
            #expect(try await one.untakenAfterWaiting(0.5).isEmpty)

            // The next element is the next different value: nothing repeated in between.
            try await store.frameworks.update(Fixtures.framework("a", name: "Changed"))
            #expect(try await one.next()?.name == "Changed")
            #expect(try await all.next().map(\.id) == ["a", "other"])
            #expect(try await all.next().map(\.name) == ["Changed", "Name of other"])
            #expect(try await one.untakenAfterWaiting(0.3).isEmpty)
            #expect(try await all.untakenAfterWaiting(0).isEmpty)
        }
    }

    @Test func aMonthIsNotRefetchedForEventsOfOtherMonths() async throws {
        try await withTemporaryStore { store, _ throws in
            let june = StreamProbe(store.events.observe(month: Fixtures.month("2026-06")))
            #expect(try await june.next() == [])
            try await store.events.insert(ObservationFixtures.event("may", on: "2026-05-31"))
            try await store.events.insert(ObservationFixtures.event("july", on: "2026-07-01"))
            try await store.events.update(ObservationFixtures.event("july", on: "2026-07-02"))
            try await store.events.insert(ObservationFixtures.event("june", on: "2026-06-15"))
            #expect(try await june.next().map(\.id) == ["june"])
            #expect(try await june.untakenAfterWaiting(0.3).isEmpty)
        }
    }

    // MARK: Coalescing

    @Test func aBurstOf50CommitsEndsWithTheFinalValue() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("counter", name: "0"))
            let one = StreamProbe(store.frameworks.observe(id: "counter"))
            #expect(try await one.next()?.name == "0")

            for number in 1...50 {
                try await store.frameworks.update(Fixtures.framework("counter", name: String(number)))
            }
            let seen = try await one.take(until: { $0?.name == "50" })
            let numbers = seen.compactMap { $0.flatMap { Int($0.name) } }
            #expect(numbers.count == seen.count)
            // In commit order, never the same value twice, possibly fewer than 50 (coalesced).
            #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "\(numbers)")
            #expect(numbers.count <= 50)
            #expect(try await one.untakenAfterWaiting(0.4).isEmpty, "nothing after the final value")
        }
    }

    @Test func aBurstOfConcurrentCommitsEndsWithTheFinalValue() async throws {
        try await withTemporaryStore { store, _ throws in
            let all = StreamProbe(store.frameworks.observeAll())
            #expect(try await all.next() == [])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<50 {
                    group.addTask { try await store.frameworks.insert(Fixtures.framework("f\(number)")) }
                }
                try await group.waitForAll()
            }
            let seen = try await all.take(until: { $0.count == 50 })
            let counts = seen.map(\.count)
            #expect(counts == counts.sorted() && Set(counts).count == counts.count, "\(counts)")
            #expect(try await all.untakenAfterWaiting(0.4).isEmpty)
        }
    }

    // MARK: Ending

    @Test func finishesWhenTheConsumingTaskIsCancelled() async throws {
        try await withTemporaryStore { store, _ throws in
            let all = StreamProbe(store.frameworks.observeAll())
            #expect(try await all.next() == [])
            all.cancel()
            let end = await all.waitForEnd()
            guard case .finished? = end else {
                Issue.record("expected the stream to finish, got \(String(describing: end))")
                return
            }
            try await store.frameworks.insert(Fixtures.framework("after"))
            #expect(all.all == [[]])
        }
    }

    @Test func finishesWithoutAnErrorWhenTheStoreCloses() async throws {
        try await withTemporaryStore { store, _ throws in
            let all = StreamProbe(store.frameworks.observeAll())
            let one = StreamProbe(store.frameworks.observe(id: "a"))
            #expect(try await all.next() == [])
            #expect(try await one.next() == .some(nil))
            try await withObservationDeadline(5, "store.close()") { await store.close() }
            guard case .finished? = await all.waitForEnd(), case .finished? = await one.waitForEnd() else {
                Issue.record(
                    "expected both streams to finish: \(String(describing: all.ended)), \(String(describing: one.ended))")
                return
            }
            #expect(store.observerCount == 0)
        }
    }

    @Test func observingAClosedStoreFinishesAtOnce() async throws {
        try await withTemporaryStore { store, _ throws in
            await store.close()
            let all = StreamProbe(store.frameworks.observeAll())
            let end = await all.waitForEnd()
            guard case .finished? = end else {
                Issue.record("expected the stream to finish, got \(String(describing: end))")
                return
            }
            #expect(all.all.isEmpty)
            #expect(store.observerCount == 0)
        }
    }

    @Test func closingTheStoreWhileCommitsAreObservedFinishesWithoutAnError() async throws {
        for round in 0..<5 {
            try await withTemporaryStore { store, _ throws in
                let all = StreamProbe(store.frameworks.observeAll())
                #expect(try await all.next() == [])
                let writes = Task {
                    for number in 0..<1000 {
                        guard (try? await store.frameworks.insert(Fixtures.framework("f\(number)"))) != nil else { return }
                    }
                }
                _ = try await all.next()
                try await withObservationDeadline(5, "store.close() and the writes") {
                    await store.close()
                    await writes.value
                }
                let end = await all.waitForEnd()
                guard case .finished? = end else {
                    Issue.record("round \(round): expected the stream to finish, got \(String(describing: end))")
                    return
                }
            }
        }
    }

    // MARK: Releasing

    @Test func cancellingReturnsTheObserverCountToZero() async throws {
        try await withTemporaryStore { store, _ throws in
            #expect(store.observerCount == 0)
            let probes = [
                StreamProbe(store.frameworks.observeAll().map { $0.count }),
                StreamProbe(store.frameworks.observe(id: "a").map { $0 == nil ? 0 : 1 }),
                StreamProbe(store.events.observe(month: Fixtures.month("2026-06")).map { $0.count }),
                StreamProbe(store.observe(.eventDates(in: Fixtures.month("2026-06"))).map { $0.count }),
            ]
            for probe in probes { #expect(try await probe.next() == 0) }
            #expect(store.observerCount == probes.count)
            for probe in probes { probe.cancel() }
            #expect(await eventually { store.observerCount == 0 }, "observerCount is \(store.observerCount)")
        }
    }

    @Test func cancellingBeforeTheFirstValueStillReleasesTheRegistration() async throws {
        try await withTemporaryStore { store, _ throws in
            var probes: [StreamProbe<[Framework]>] = []
            for _ in 0..<20 {
                let probe = StreamProbe(store.frameworks.observeAll())
                probe.cancel()
                probes.append(probe)
            }
            #expect(await eventually { store.observerCount == 0 }, "observerCount is \(store.observerCount)")
            for probe in probes { #expect(await probe.waitForEnd() != nil) }
        }
    }

    @Test func droppingAnUnconsumedStreamReleasesItsRegistration() async throws {
        try await withTemporaryStore { store, _ throws in
            do {
                let stream = store.frameworks.observeAll()
                _ = stream
            }
            #expect(await eventually { store.observerCount == 0 }, "observerCount is \(store.observerCount)")
        }
    }

    @Test func repeatedObservingAndCancellingLeaksNoReaderConnection() async throws {
        var configuration = Store.Configuration()
        configuration.maximumReaders = 2
        try await withTemporaryStore(configuration: configuration) { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("a"))
            for round in 0..<30 {
                let probes = [StreamProbe(store.frameworks.observeAll()), StreamProbe(store.frameworks.observeAll())]
                for probe in probes { #expect(try await probe.next().count == round + 1) }
                try await store.frameworks.insert(Fixtures.framework("r\(round)"))
                for probe in probes { #expect(try await probe.next().count == round + 2) }
                for probe in probes { probe.cancel() }
                #expect(await eventually { store.observerCount == 0 }, "round \(round): observerCount is \(store.observerCount)")
                let open = store.openReaderConnections
                #expect(open <= configuration.maximumReaders, "round \(round): \(open) reader connections")
            }
            // Every connection is back in the pool: as many reads at once as the pool allows still run.
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<configuration.maximumReaders { group.addTask { try await store.frameworks.count() } }
                for try await count in group { #expect(count == 31) }
            }
        }
    }

    // MARK: Other connections and processes

    @Test func aCommitFromASecondStoreOnTheSameFileArrives() async throws {
        try await withTemporaryStore { observer, directory throws in
            try await withStore(at: directory.databasePath) { writer throws in
                let all = StreamProbe(observer.frameworks.observeAll())
                let one = StreamProbe(observer.frameworks.observe(id: "x2"))
                #expect(try await all.next() == [])
                #expect(try await one.next() == .some(nil))
                for number in 1...3 {
                    try await writer.frameworks.insert(Fixtures.framework("x\(number)"))
                    #expect(try await all.next().count == number)
                }
                #expect(try await one.next()?.id == "x2")

                // A rolled-back write in the other store is never seen.
                _ = await outcome {
                    try await writer.write { db in
                        try db.frameworks.insert(Fixtures.framework("ghost"))
                        throw Rollback()
                    }
                }
                #expect(try await all.untakenAfterWaiting(0.6).isEmpty)
            }
        }
    }

    @Test func aCommitFromAnotherConnectionAsObservationStartsIsNeverLost() async throws {
        try await withTemporaryStore { observer, directory throws in
            try await withStore(at: directory.databasePath) { writer throws in
                for round in 0..<10 {
                    // The commit lands before, during or after the first fetch: either the first
                    // value holds it or a later one does.
                    let all = StreamProbe(observer.frameworks.observeAll())
                    try await writer.frameworks.insert(Fixtures.framework("r\(round)"))
                    let seen = try await all.take(until: { $0.count == round + 1 })
                    #expect(seen.last?.last?.id == "r\(round)")
                    all.cancel()
                }
            }
        }
    }

    @Test func anEventMovedInASecondStoreReachesTheMonthObserver() async throws {
        try await withTemporaryStore { observer, directory throws in
            try await observer.events.insert(ObservationFixtures.event("e", on: "2026-05-31"))
            try await withStore(at: directory.databasePath) { writer throws in
                let june = StreamProbe(observer.events.observe(month: Fixtures.month("2026-06")))
                #expect(try await june.next() == [])
                try await writer.events.update(ObservationFixtures.event("e", on: "2026-06-02"))
                #expect(try await june.next().map(\.id) == ["e"])
            }
        }
    }

}
