import Foundation
import Testing

@testable import Store

/// The change log keeps the last 10,000 transactions and, of those, at most `retainedBytes` of
/// changes (migration 0015 records each row's size before its text).
@Suite("Change log: retention by size")
struct ChangeLogRetentionTests {
    /// One change whose key makes the logged text about `bytes` long.
    private static func changes(_ bytes: Int, _ tag: String) -> ChangeList {
        ChangeList([Change(kind: .framework, key: tag + String(repeating: "k", count: bytes), operation: .update)])
    }

    @Test("past the byte bound the oldest transactions go, never the newest; each row's size is its text's")
    func prunesBySize() async throws {
        try await withTemporaryStore { store, _ throws in
            let rows = try await store.write { db -> [[Int64]] in
                let log = ChangeLogTable(db: db, retainedBytes: 3_000_000)
                for index in 0..<3 { try log.append(Self.changes(100, "small-\(index)-"), committedAt: Date()) }
                // Each of these is past `sizeCheckBytes`, so each checks the bound at once.
                for index in 0..<3 { try log.append(Self.changes(1_200_000, "big-\(index)-"), committedAt: Date()) }
                return try db.query("SELECT tx, size, length(CAST(changes AS BLOB)) FROM change_log ORDER BY tx") {
                    [$0.int64(0), $0.int64(1), $0.int64(2)]
                }
            }
            // The last two big ones (2.4 MB) fit; with the one before, 3.6 MB did not.
            #expect(rows.count == 2, "\(rows)")
            #expect(rows.allSatisfy { $0[1] == $0[2] && $0[1] > 1_200_000 }, "\(rows)")

            // A single transaction larger than the whole bound is kept: it is the newest.
            let alone = try await store.write { db -> Int in
                let log = ChangeLogTable(db: db, retainedBytes: 1_000)
                try log.append(Self.changes(1_100_000, "huge-"), committedAt: Date())
                return try db.query("SELECT count(*) FROM change_log") { $0.int(0) }[0]
            }
            #expect(alone == 1)
        }
    }

    @Test("migration 0015 records the size of each row logged before it")
    func migrationBackfillsSizes() async throws {
        try await withTemporaryDirectory { directory throws in
            var configuration = Store.Configuration()
            let index = try #require(Migration.embedded.firstIndex { $0.name == "change_log_sizes" })
            configuration.migrations = Array(Migration.embedded[..<index])
            try await withStore(at: directory.databasePath, configuration: configuration) { store throws in
                for id in ["a", "b"] { try await store.frameworks.insert(Fixtures.framework(id)) }
                let columns = try await store.read {
                    try $0.query("SELECT name FROM pragma_table_info('change_log') ORDER BY cid") { $0.text(0) }
                }
                #expect(columns == ["tx", "committed_at", "changes"])
            }
            configuration.migrations = Migration.embedded
            try await withStore(at: directory.databasePath, configuration: configuration) { store throws in
                let rows = try await store.read {
                    try $0.query("SELECT size, length(CAST(changes AS BLOB)) FROM change_log ORDER BY tx") {
                        [$0.int64(0), $0.int64(1)]
                    }
                }
                #expect(rows.count == 2 && rows.allSatisfy { $0[0] == $0[1] && $0[0] > 0 }, "\(rows)")
                // And the next write logs its size too.
                try await store.frameworks.insert(Fixtures.framework("c"))
                let last = try await store.read {
                    try $0.query("SELECT size = length(CAST(changes AS BLOB)) FROM change_log ORDER BY tx DESC LIMIT 1") {
                        $0.int64(0)
                    }
                }
                #expect(last == [1])
            }
        }
    }
}
