import Foundation
import Testing

@testable import Store

@Suite("In-memory store")
struct InMemoryStoreTests {
    @Test func keepsEveryKindOfRecord() async throws {
        let clock = ManualClock()
        var configuration = Store.Configuration()
        configuration.clock = clock.storeClock
        configuration.imageCacheBudget = 100
        try await withInMemoryStore(configuration: configuration) { store throws in
            #expect(store.path == nil)

            let framework = Fixtures.framework("arkit")
            try await store.frameworks.insert(framework)
            #expect(try await store.frameworks.fetchAll() == [framework])
            await #expect(throws: StoreError.recordExists(kind: .framework, key: "arkit")) {
                try await store.frameworks.insert(framework)
            }

            let order = Fixtures.order("o-1", prices: ["0.10", "0.20"])
            try await store.orders.insert(order)
            #expect(try await store.orders.find("o-1") == order)
            #expect(try await store.orders.total("o-1") == Money("0.30"))
            #expect(try await store.orders.delete("o-1"))
            #expect(try await store.read { try $0.integer("SELECT count(*) FROM order_items") } == 0)

            let event = Event(id: "e-7", title: "WWDC keynote", date: Fixtures.date("2026-06-08"), notes: "Hall A")
            try await store.events.insert(event)
            #expect(try await store.events.on(event.date) == [event])
            #expect(try await store.events.dates(in: event.date.yearMonth) == [DateCount(date: event.date, count: 1)])

            try await store.images.put("a", data: Data(count: 60))
            clock.advance()
            #expect(try await store.images.put("b", data: Data(count: 60)) == ["a"])
            #expect(try await store.images.get("b")?.data.count == 60)

            let status = try await store.migrationStatus()
            #expect(status.map(\.version) == Migration.embedded.map(\.version))
            #expect(status.allSatisfy { $0.state == .applied })
        }
    }

    @Test func eachInMemoryStoreIsItsOwn() async throws {
        try await withInMemoryStore { first throws in
            try await withInMemoryStore { second throws in
                try await first.frameworks.insert(Fixtures.framework("only-in-first"))
                #expect(try await first.frameworks.count() == 1)
                #expect(try await second.frameworks.count() == 0)
            }
        }
    }

    @Test func rollsBackAFailedWrite() async throws {
        struct Abort: Error {}
        try await withInMemoryStore { store throws in
            await #expect(throws: Abort.self) {
                try await store.write { db in
                    try db.frameworks.insert(Fixtures.framework("lost"))
                    throw Abort()
                }
            }
            #expect(try await store.frameworks.count() == 0)
            try await store.frameworks.insert(Fixtures.framework("kept"))
            #expect(try await store.frameworks.count() == 1)
        }
    }
}
