import Foundation
import Testing

@testable import Store

/// The image cache's entry count and bytes, kept by migration 0016's triggers so that a put
/// checks the budget without summing every entry.
@Suite("Image cache totals", .timeLimit(.minutes(10)))
struct ImageCacheTotalsTests {
    private static let budget = 100

    private static func kept(_ store: Store) async throws -> [Int] {
        try await store.read { db in
            try db.query("SELECT entries, bytes FROM image_cache_totals") { [$0.int(0), $0.int(1)] }
        }.first ?? []
    }

    private static func counted(_ store: Store) async throws -> [Int] {
        let stats = try await store.images.stats()
        return [stats.count, stats.totalBytes]
    }

    private func withImageStore(_ body: (Store) async throws -> Void) async throws {
        var configuration = Store.Configuration()
        configuration.imageCacheBudget = Self.budget
        try await withTemporaryStore(configuration: configuration) { store, _ in try await body(store) }
    }

    @Test("the totals follow puts, replacements, deletions, eviction and raw SQL")
    func totalsFollowEveryChange() async throws {
        try await withImageStore { store in
            #expect(try await Self.kept(store) == [0, 0])
            try await store.images.put("a", data: Data(count: 30))
            try await store.images.put("b", data: Data(count: 20))
            #expect(try await Self.kept(store) == [2, 50])
            try await store.images.put("a", data: Data(count: 10))
            #expect(try await Self.kept(store) == [2, 30])
            #expect(try await store.images.delete("b"))
            #expect(try await Self.kept(store) == [1, 10])
            // Over the budget: the least recently used go, and the totals with them.
            try await store.images.put("c", data: Data(count: 60))
            #expect(try await store.images.put("d", data: Data(count: 40)) == ["a"])
            #expect(try await Self.kept(store) == [2, 100])
            // Raw SQL, the upsert of an existing row included.
            try await store.write { db in
                try db.execute("UPDATE images SET size = 25 WHERE url = 'd'")
                try db.execute(
                    """
                    INSERT INTO images (url, data, size, stored_at, last_access_at) VALUES ('e', x'01', 1, 0, 0), ('d', x'', 5, 0, 0)
                    ON CONFLICT (url) DO UPDATE SET size = excluded.size
                    """)
            }
            #expect(try await Self.kept(store) == [3, 66])
            try await store.write { db in try db.execute("DELETE FROM images") }
            #expect(try await Self.kept(store) == [0, 0])
            #expect(try await Self.counted(store) == [0, 0])
        }
    }

    @Test("a write that rolls back leaves the totals as they were")
    func rollbackKeepsTotals() async throws {
        try await withImageStore { store in
            try await store.images.put("a", data: Data(count: 30))
            struct Stop: Error {}
            await #expect(throws: Stop.self) {
                try await store.write { db in
                    try db.images.put("b", data: Data(count: 40), contentType: nil)
                    throw Stop()
                }
            }
            #expect(try await Self.kept(store) == [1, 30])
        }
    }

    /// `INSERT OR REPLACE` deletes the row it replaces without firing delete triggers (unless
    /// recursive triggers are on), so raw SQL can leave the totals too high. A put that finds
    /// every other entry too small to cover the excess counts instead of evicting them all, and
    /// `prune` (as every sync's end) counts and puts the totals right.
    @Test("totals left too high by a raw REPLACE are counted again, not obeyed")
    func totalsTooHighAreCounted() async throws {
        try await withImageStore { store in
            try await store.images.put("a", data: Data(count: 30))
            try await store.images.put("b", data: Data(count: 30))
            try await store.write { db in
                for _ in 0..<4 {
                    try db.execute(
                        "INSERT OR REPLACE INTO images (url, data, size, stored_at, last_access_at) VALUES ('a', zeroblob(30), 30, 0, 0)"
                    )
                }
            }
            #expect(try await Self.kept(store) == [6, 180])
            #expect(try await Self.counted(store) == [2, 60])
            // 190 bytes by the kept totals, 90 over; a and b hold 60: counted, 70, nothing evicted.
            #expect(try await store.images.put("c", data: Data(count: 10)) == [])
            #expect(try await Self.kept(store) == [3, 70])
            #expect(try await store.images.list().map(\.url) == ["a", "b", "c"])

            try await store.write { db in
                try db.execute(
                    "INSERT OR REPLACE INTO images (url, data, size, stored_at, last_access_at) VALUES ('c', zeroblob(10), 10, 0, 0)"
                )
            }
            #expect(try await Self.kept(store) == [4, 80])
            #expect(try await store.images.prune() == [])
            #expect(try await Self.kept(store) == [3, 70])
        }
    }

    @Test("a missing or meddled totals row is counted again")
    func missingRowIsCounted() async throws {
        try await withImageStore { store in
            try await store.images.put("a", data: Data(count: 30))
            // Text was added to as if it were 0 (a wrong total no read could tell); past 2^63
            // an addition turns real.
            for meddling in [
                "DELETE FROM image_cache_totals", "UPDATE image_cache_totals SET bytes = -1000",
                "UPDATE image_cache_totals SET bytes = 9223372036854775807", "UPDATE image_cache_totals SET bytes = 'x'",
                "UPDATE image_cache_totals SET entries = 9223372036854775807",
            ] {
                try await store.write { db in try db.execute(meddling) }
                try await store.images.put("b", data: Data(count: 20))
                #expect(try await Self.kept(store) == [2, 50], "\(meddling)")
                #expect(try await store.images.delete("b"))
            }
        }
    }

    /// The cache held entries when the store was migrated: the totals count them, a size the
    /// store could not have written (changed around it) as 0 bytes, and a put over the budget
    /// still names that entry when eviction reaches it.
    @Test("migration 0016 counts the entries already cached")
    func migrationCountsExistingEntries() async throws {
        try await withTemporaryDirectory { directory throws in
            var configuration = Store.Configuration()
            configuration.imageCacheBudget = Self.budget
            let index = try #require(Migration.embedded.firstIndex { $0.name == "image_cache_totals" })
            configuration.migrations = Array(Migration.embedded[..<index])
            try await withStore(at: directory.databasePath, configuration: configuration) { store throws in
                try await store.write { db in
                    try db.execute(
                        """
                        INSERT INTO images (url, data, size, stored_at, last_access_at) VALUES
                            ('a', zeroblob(30), 30, 0, 0), ('b', zeroblob(20), 20, 1, 1), ('bad', x'01', 'big', 2, 2)
                        """)
                }
            }
            configuration.migrations = Migration.embedded
            try await withStore(at: directory.databasePath, configuration: configuration) { store throws in
                #expect(try await Self.kept(store) == [3, 50])
                try await store.images.put("c", data: Data(count: 40))
                #expect(try await Self.kept(store) == [4, 90])
                // 20 over: a goes first (30 bytes), b and bad are not reached.
                #expect(try await store.images.put("d", data: Data(count: 20)) == ["a"])
                // 80 with 50 more: b (20), then bad, whose size names it.
                let error = await #expect(throws: StoreError.self) { try await store.images.put("e", data: Data(count: 50)) }
                #expect(
                    String(describing: error).contains("image 'bad'") && String(describing: error).contains("size"),
                    "\(String(describing: error))")
            }
        }
    }
}
