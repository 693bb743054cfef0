import Foundation
import Testing

@testable import Store

/// `Store.observe(_:)` fetches when its consumer asks for the next value, never ahead: a consumer
/// that stops reading holds one pending signal, not a value per burst (it held 268 MB after 2,000
/// updates of a 5,000-record observation), and one that comes back gets the latest value.
@Suite("Value observation: fetched on demand", .timeLimit(.minutes(10)))
struct ObservationOnDemandTests {
    @Test("100 commits while the consumer does not read: no fetch; its next value is the latest, fetched once")
    func slowConsumer() async throws {
        // 101 commits: under `.full` each syncs the WAL, which a busy disk (the whole suite
        // running) makes slow; what is tested here is the observation, not the sync.
        var configuration = Store.Configuration()
        configuration.durability = .normal
        try await withTemporaryStore(configuration: configuration) { store, _ throws in
            let fetches = LockedBox(0)
            let observation = ValueObservation<[String]>(kinds: [.framework]) { db in
                fetches.withLock { $0 += 1 }
                return try db.frameworks.fetchAll().map(\.name)
            }
            var values = store.observe(observation).makeAsyncIterator()
            #expect(fetches.withLock { $0 } == 0, "fetched before it was asked")
            #expect(try await values.next() == [])
            #expect(fetches.withLock { $0 } == 1)

            try await store.frameworks.insert(Fixtures.framework("a", name: "v0"))
            for version in 1...100 {
                try await store.write { db in
                    try db.execute("UPDATE frameworks SET name = ? WHERE id = 'a'", [.text("v\(version)")])
                }
            }
            // Give the monitor time to hear every commit: it signals, and nothing fetches.
            try await Task.sleep(for: .milliseconds(300))
            #expect(fetches.withLock { $0 } == 1)

            #expect(try await values.next() == ["v100"])
            #expect(fetches.withLock { $0 } == 2)
        }
    }

    @Test("a stream made and never iterated registers nothing; its first value is the one at the first next()")
    func neverIterated() async throws {
        var configuration = Store.Configuration()
        configuration.durability = .normal
        try await withTemporaryStore(configuration: configuration) { store, _ throws in
            let stream = store.frameworks.observeAll()
            for index in 0..<20 { try await store.frameworks.insert(Fixtures.framework("f\(index)")) }
            #expect(store.observerCount == 0)
            var values = stream.makeAsyncIterator()
            #expect(try await values.next()?.count == 20)
            #expect(store.observerCount == 1)
            try await store.frameworks.insert(Fixtures.framework("late"))
            #expect(try await values.next()?.count == 21)
        }
    }
}
