import Foundation
import Testing

@testable import Store

@Suite("Image cache in a file store")
struct ImageStoreTests {
    private static let budget = 100

    private func withImageStore(
        budget: Int = ImageStoreTests.budget, _ body: (Store, ManualClock) async throws -> Void
    ) async throws {
        let clock = ManualClock()
        var configuration = Store.Configuration()
        configuration.imageCacheBudget = budget
        configuration.clock = clock.storeClock
        try await withTemporaryStore(configuration: configuration) { store, _ in try await body(store, clock) }
    }

    private static func bytes(_ count: Int, _ value: UInt8 = 0xAB) -> Data { Data(repeating: value, count: count) }

    @Test func storesAndReturnsBytesWithTheirTimes() async throws {
        try await withImageStore { store, clock throws in
            let storedAt = clock.now
            let data = Data((0..<40).map { UInt8($0) })
            #expect(try await store.images.put("https://example.com/a.png", data: data, contentType: "image/png") == [])
            let readAt = clock.advance(seconds: 60)
            let image = try #require(try await store.images.get("https://example.com/a.png"))
            #expect(image.data == data)
            #expect(image.contentType == "image/png")
            #expect(image.storedAt == storedAt)
            #expect(image.lastAccessAt == readAt)
            #expect(try await store.images.get("https://example.com/missing.png") == nil)
        }
    }

    @Test(
        "put takes only keys a feed carries back as they are",
        arguments: [
            "javascript:alert(1)", "ftp://example.com/a.png", "not a url", "", "https://example.com/a b",
            "http://example.com/\u{FC}", "https:///a.png", "/etc/passwd", "../up.png", "//other.host/x.png", "a/./b.png",
        ])
    func refusesKeysAFeedCannotCarry(_ url: String) async throws {
        try await withImageStore { store, _ throws in
            await #expect(throws: StoreError.self) { try await store.images.put(url, data: Self.bytes(3)) }
            #expect(try await store.images.list().isEmpty)
            #expect(ImageTable.keyProblem(url) != nil)
        }
        for key in ["https://example.com/a%20b", "img/a.png", "a"] { #expect(ImageTable.keyProblem(key) == nil, "\(key)") }
        #expect(ImageTable.keyProblem("https://example.com/a b")?.contains("https://example.com/a%20b") == true)
    }

    @Test("bytes beyond what SQLite stores in one value are refused naming the image and the limit")
    func refusesBytesSQLiteCannotStore() async throws {
        try await withImageStore(budget: 10_000) { store, _ throws in
            // SQLite's own limit is a gigabyte: lowered here for the test, then restored.
            let error = await #expect(throws: StoreError.self) {
                try await store.write { db in
                    let old = db.limitValueBytes(to: 100)
                    defer { db.limitValueBytes(to: old) }
                    try db.images(budget: 10_000, now: Date()).put(
                        "https://example.com/big.png", data: Self.bytes(200), contentType: nil)
                }
            }
            #expect("\(error.map { String(describing: $0) } ?? "")".contains("https://example.com/big.png"))
            #expect("\(error.map { String(describing: $0) } ?? "")".contains("200 bytes exceed the"))
            #expect(try await store.images.list().isEmpty)
        }
    }

    @Test func keepsAnEmptyImageAsZeroBytes() async throws {
        try await withImageStore { store, _ throws in
            try await store.images.put("empty", data: Data())
            #expect(try await store.images.get("empty")?.data == Data())
            #expect(try await store.images.stats().count == 1)
        }
    }

    @Test func listsEntriesWithoutBytesAndCountsThem() async throws {
        try await withImageStore { store, clock throws in
            try await store.images.put("b", data: Self.bytes(30), contentType: "image/jpeg")
            clock.advance()
            try await store.images.put("a", data: Self.bytes(20))
            let list = try await store.images.list()
            #expect(list.map(\.url) == ["a", "b"])
            #expect(list.map(\.size) == [20, 30])
            #expect(list.map(\.contentType) == [nil, "image/jpeg"])
            #expect(try await store.images.stats() == ImageCacheStats(count: 2, totalBytes: 50, budgetBytes: Self.budget))
            #expect(try await store.images.contains("a"))
            #expect(try await !store.images.contains("c"))
        }
    }

    @Test func replacesTheBytesOfAURL() async throws {
        try await withImageStore { store, clock throws in
            try await store.images.put("a", data: Self.bytes(10, 1))
            let replacedAt = clock.advance()
            try await store.images.put("a", data: Self.bytes(25, 2), contentType: "image/gif")
            let image = try #require(try await store.images.get("a"))
            #expect(image.data == Self.bytes(25, 2))
            #expect(image.storedAt == replacedAt)
            #expect(try await store.images.stats() == ImageCacheStats(count: 1, totalBytes: 25, budgetBytes: Self.budget))
        }
    }

    @Test func deletesAnEntryOnlyOnce() async throws {
        try await withImageStore { store, _ throws in
            try await store.images.put("a", data: Self.bytes(10))
            #expect(try await store.images.delete("a"))
            #expect(try await !store.images.delete("a"))
            #expect(try await store.images.get("a") == nil)
            #expect(try await store.images.stats().totalBytes == 0)
        }
    }

    @Test func evictsTheLeastRecentlyUsedBeyondTheBudget() async throws {
        try await withImageStore { store, clock throws in
            try await store.images.put("a", data: Self.bytes(40))
            clock.advance()
            try await store.images.put("b", data: Self.bytes(40))
            clock.advance()
            #expect(try await store.images.put("c", data: Self.bytes(40)) == ["a"])
            #expect(try await store.images.list().map(\.url) == ["b", "c"])
            let stats = try await store.images.stats()
            #expect(stats.totalBytes == 80)
            #expect(stats.totalBytes <= stats.budgetBytes)
        }
    }

    /// A cache filled to exactly its budget is within it: eviction stops there (it evicted one
    /// entry too many, unnoticed, when it went on while the total equalled the budget).
    @Test func evictsNoMoreThanNeededToReachTheBudgetExactly() async throws {
        try await withImageStore(budget: 100) { store, clock throws in
            #expect(try await store.images.put("a", data: Self.bytes(20)) == [])
            clock.advance()
            #expect(try await store.images.put("b", data: Self.bytes(40)) == [])
            clock.advance()
            #expect(try await store.images.put("c", data: Self.bytes(40)) == [], "100 bytes: the whole budget, no more")
            clock.advance()
            #expect(try await store.images.put("d", data: Self.bytes(20)) == ["a"])
            #expect(try await store.images.list().map(\.url) == ["b", "c", "d"])
            #expect(try await store.images.stats().totalBytes == 100)
        }
    }

    @Test func readingAnEntryKeepsItFromEviction() async throws {
        try await withImageStore { store, clock throws in
            try await store.images.put("a", data: Self.bytes(40))
            clock.advance()
            try await store.images.put("b", data: Self.bytes(40))
            clock.advance()
            _ = try await store.images.get("a") // now "b" is the least recently used
            clock.advance()
            #expect(try await store.images.put("c", data: Self.bytes(40)) == ["b"])
            #expect(try await store.images.list().map(\.url) == ["a", "c"])
        }
    }

    @Test func evictsAsManyAsNeededToFitANewLargeEntry() async throws {
        try await withImageStore { store, clock throws in
            for url in ["a", "b", "c", "d"] {
                try await store.images.put(url, data: Self.bytes(25))
                clock.advance()
            }
            #expect(try await store.images.put("big", data: Self.bytes(90)) == ["a", "b", "c", "d"])
            #expect(try await store.images.stats() == ImageCacheStats(count: 1, totalBytes: 90, budgetBytes: Self.budget))
        }
    }

    @Test func refusesBytesLargerThanTheWholeBudget() async throws {
        try await withImageStore { store, _ throws in
            try await store.images.put("small", data: Self.bytes(60))
            let error = await #expect(throws: StoreError.self) {
                try await store.images.put("huge", data: Self.bytes(Self.budget + 1))
            }
            guard case .invalidRecord(.image, "huge", "data", _) = error else {
                Issue.record("expected invalidRecord for the data, got \(String(describing: error))")
                return
            }
            #expect(try await store.images.list().map(\.url) == ["small"])
            try await store.images.put("exact", data: Self.bytes(Self.budget))
            #expect(try await store.images.list().map(\.url) == ["exact"])
        }
    }

    @Test func pruneEvictsDownToASmallerBudgetAfterReopening() async throws {
        try await withTemporaryDirectory { directory throws in
            let clock = ManualClock()
            var configuration = Store.Configuration()
            configuration.clock = clock.storeClock
            try await withStore(at: directory.databasePath, configuration: configuration) { store throws in
                for url in ["a", "b", "c"] {
                    try await store.images.put(url, data: Self.bytes(40))
                    clock.advance()
                }
            }
            configuration.imageCacheBudget = Self.budget
            try await withStore(at: directory.databasePath, configuration: configuration) { store throws in
                #expect(try await store.images.stats().totalBytes == 120)
                #expect(try await store.images.prune() == ["a"])
                #expect(try await store.images.prune() == [])
                #expect(try await store.images.stats() == ImageCacheStats(count: 2, totalBytes: 80, budgetBytes: Self.budget))
            }
        }
    }
}
