import Foundation
import Testing

@testable import Store

@Suite("Frameworks in a file store")
struct FrameworkStoreTests {
    @Test func insertsAndFindsAFramework() async throws {
        try await withTemporaryStore { store, _ throws in
            let arkit = Fixtures.framework("arkit", name: "ARKit")
            try await store.frameworks.insert(arkit)
            #expect(try await store.frameworks.find("arkit") == arkit)
            #expect(try await store.frameworks.find("metal") == nil)
            #expect(try await store.frameworks.count() == 1)
        }
    }

    @Test func keepsEveryAppleFrameworkOfTheExampleFeedExactly() async throws {
        let frameworks = try Fixtures.appleFrameworks()
        try #require(!frameworks.isEmpty)
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(frameworks)
            #expect(try await store.frameworks.count() == frameworks.count)
            #expect(try await store.frameworks.fetchAll() == frameworks.sorted { $0.id < $1.id })
        }
    }

    @Test func keepsTextWithNULsAndNonASCIICharacters() async throws {
        try await withTemporaryStore { store, _ throws in
            var framework = Fixtures.framework("swiftui")
            framework.description = "before\u{0}after — “quoted” 👩🏽‍💻 Straße"
            try await store.frameworks.insert(framework)
            #expect(try await store.frameworks.find("swiftui")?.description == framework.description)
        }
    }

    @Test func refusesToInsertAnIDThatIsTaken() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("arkit", name: "ARKit"))
            await #expect(throws: StoreError.recordExists(kind: .framework, key: "arkit")) {
                try await store.frameworks.insert(Fixtures.framework("arkit", name: "Another"))
            }
            #expect(try await store.frameworks.find("arkit")?.name == "ARKit")
        }
    }

    @Test func insertsAManyFrameworksAllOrNone() async throws {
        try await withTemporaryStore { store, _ throws in
            let batch = ["a", "b", "a"].map { Fixtures.framework($0) }
            await #expect(throws: StoreError.recordExists(kind: .framework, key: "a")) {
                try await store.frameworks.insert(batch)
            }
            #expect(try await store.frameworks.count() == 0)
        }
    }

    @Test func updatesAnExistingFramework() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("metal"))
            var metal = Fixtures.framework("metal", name: "Metal 4")
            metal.urlString = "https://developer.apple.com/metal/"
            try await store.frameworks.update(metal)
            #expect(try await store.frameworks.find("metal") == metal)
            #expect(try await store.frameworks.count() == 1)
        }
    }

    @Test func refusesToUpdateAFrameworkThatDoesNotExist() async throws {
        try await withTemporaryStore { store, _ throws in
            await #expect(throws: StoreError.recordNotFound(kind: .framework, key: "ghost")) {
                try await store.frameworks.update(Fixtures.framework("ghost"))
            }
            #expect(try await store.frameworks.count() == 0)
        }
    }

    @Test func deletesAFrameworkOnlyOnce() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert([Fixtures.framework("a"), Fixtures.framework("b")])
            #expect(try await store.frameworks.delete("a"))
            #expect(try await !store.frameworks.delete("a"))
            #expect(try await store.frameworks.fetchAll().map(\.id) == ["b"])
        }
    }

    @Test func fetchesAllOrderedByID() async throws {
        try await withTemporaryStore { store, _ throws in
            let ids = ["vision", "arkit", "metal", "carplay"]
            for id in ids { try await store.frameworks.insert(Fixtures.framework(id)) }
            #expect(try await store.frameworks.fetchAll().map(\.id) == ids.sorted())
        }
    }

    @Test func refusesAnEmptyOrOverlongID() async throws {
        try await withTemporaryStore { store, _ throws in
            let error = await #expect(throws: StoreError.self) { try await store.frameworks.insert(Fixtures.framework("")) }
            guard case .invalidRecord(.framework, _, "id", _) = error else {
                Issue.record("expected invalidRecord for the id, got \(String(describing: error))")
                return
            }
            await #expect(throws: StoreError.self) {
                try await store.frameworks.insert(Fixtures.framework(String(repeating: "x", count: 201)))
            }
            try await store.frameworks.insert(Fixtures.framework(String(repeating: "é", count: 200)))
            #expect(try await store.frameworks.count() == 1)
        }
    }
}
