import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// Changes are collected by SQLite's own hooks on the writer connection (`ChangeCollector`), so
/// raw SQL through `Database.execute` inside `store.write` is observed and logged like the
/// record tables' writes, and rolled-back raw SQL never is.
@Suite("Raw SQL writes are observed", .timeLimit(.minutes(10)))
struct RawWriteObservationTests {
    struct Rollback: Error {}

    static let insertFramework =
        "INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES (?, 'Raw', 'raw', 'https://example.com/raw', 'Written with raw SQL.')"

    /// The `changes` texts of every logged transaction.
    static func changeLog(_ store: Store) async throws -> [String] {
        try await store.read { db in try db.fetchAll("SELECT changes FROM change_log ORDER BY tx").map { $0[0].textValue ?? "" } }
    }

    @Test func aRawInsertIsSeenByChangesAndObserve() async throws {
        try await withTemporaryStore { store, _ throws in
            let changes = StreamProbe(store.changes())
            let all = StreamProbe(store.frameworks.observeAll())
            #expect(try await all.next() == [])
            #expect(await eventually { store.observerCount == 2 })
            try await store.write { db in try db.execute(Self.insertFramework, ["raw"]) }
            #expect(try await changes.next().changes == [Change(kind: .framework, key: "raw", operation: .insert)])
            #expect(try await all.next().map(\.id) == ["raw"])
            #expect(try await Self.changeLog(store).contains { $0.contains("raw") })
        }
    }

    @Test func rolledBackRawWritesAreNeverSeenNorLogged() async throws {
        try await withTemporaryStore { store, _ throws in
            let changes = StreamProbe(store.changes())
            #expect(await eventually { store.observerCount == 1 })
            // The closure throws: the writer rolls the transaction back (the rollback hook fires).
            _ = await outcome {
                try await store.write { db in
                    try db.execute(Self.insertFramework, ["thrown"]); throw Rollback()
                }
            }
            // A raw savepoint rolled back inside a write that commits: the rollback hook does not
            // fire for ROLLBACK TO; the collector's savepoint marks drop what it undid. Savepoint
            // names match as SQLite matches them, ignoring the case of ASCII letters.
            try await store.write { db in
                try db.execute("SAVEPOINT attempt")
                try db.execute(Self.insertFramework, ["undone"])
                try db.execute("UPDATE frameworks SET name = 'x' WHERE id = 'undone'")
                try db.execute("ROLLBACK TO SAVEPOINT Attempt")
                try db.execute("RELEASE attempt")
                try db.execute(Self.insertFramework, ["kept"])
            }
            #expect(try await changes.next().changes == [Change(kind: .framework, key: "kept", operation: .insert)])
            #expect(try await changes.untakenAfterWaiting(0.3).isEmpty)
            let log = try await Self.changeLog(store)
            #expect(log.count == 1 && log[0].contains("kept"), "\(log)")
            #expect(!log.contains { $0.contains("thrown") || $0.contains("undone") }, "\(log)")
            #expect(try await store.frameworks.fetchAll().map(\.id) == ["kept"])
        }
    }

    @Test func aRawUpdateMovingAnEventReportsBothDates() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.events.insert(ObservationFixtures.event("e", on: "2026-06-08"))
            let changes = StreamProbe(await store.changesFromNow())
            try await store.write { db in try db.execute("UPDATE events SET date = '2026-06-09', title = 'Moved' WHERE id = 'e'")
            }
            #expect(
                try await changes.next().changes == [
                    Change(
                        kind: .event, key: "e", operation: .update,
                        dates: [Fixtures.date("2026-06-08"), Fixtures.date("2026-06-09")])
                ])
            try await store.write { db in try db.execute("DELETE FROM events WHERE id = 'e'") }
            #expect(
                try await changes.next().changes == [
                    Change(kind: .event, key: "e", operation: .delete, dates: [Fixtures.date("2026-06-09")])
                ])
        }
    }

    @Test func anOrderWithItemsIsOneChangeAndARawDeleteOfItIsOneDelete() async throws {
        try await withTemporaryStore { store, _ throws in
            let changes = StreamProbe(await store.changesFromNow())
            try await store.orders.insert(Fixtures.order("o", prices: ["1.00", "2.00", "3.00"]))
            #expect(try await changes.next().changes == [Change(kind: .order, key: "o", operation: .insert)])
            // An item changed with raw SQL is a change of its order.
            try await store.write { db in
                try db.execute("UPDATE order_items SET quantity = 2 WHERE order_id = 'o' AND position = 1")
            }
            #expect(try await changes.next().changes == [Change(kind: .order, key: "o", operation: .update)])
            // ON DELETE CASCADE removes the items; the order is one delete.
            try await store.write { db in try db.execute("DELETE FROM orders WHERE id = 'o'") }
            #expect(try await changes.next().changes == [Change(kind: .order, key: "o", operation: .delete)])
            #expect(try await store.read { db in try db.fetchOne("SELECT count(*) FROM order_items")?[0] } == .integer(0))
        }
    }

    /// SQLite skips the truncate optimisation while a pre-update hook is registered, so a DELETE
    /// without WHERE reports every record it removed.
    @Test func aDeleteWithoutWhereReportsEveryRecord() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.write { db in for id in ["a", "b", "c"] { try db.frameworks.insert(Fixtures.framework(id)) } }
            let changes = StreamProbe(await store.changesFromNow())
            try await store.write { db in try db.execute("DELETE FROM frameworks") }
            #expect(
                Set(try await changes.next().changes)
                    == Set(["a", "b", "c"].map { Change(kind: .framework, key: $0, operation: .delete) }))
        }
    }

    @Test func insertOrReplaceOfAnExistingImageIsAnUpdate() async throws {
        try await withTemporaryStore { store, _ throws in
            let url = "https://example.com/i.png"
            try await store.images.put(url, data: Data([1, 2, 3]), contentType: "image/png")
            let changes = StreamProbe(await store.changesFromNow())
            try await store.write { db in
                try db.execute(
                    "INSERT OR REPLACE INTO images (url, data, content_type, size, stored_at, last_access_at) VALUES (?, x'0405', 'image/png', 2, 0, 0)",
                    [.text(url)])
            }
            #expect(try await changes.next().changes == [Change(kind: .image, key: url, operation: .update)])
            // Reading an image touches its access time: bookkeeping, not a change.
            _ = try await store.images.get(url)
            try await store.write { db in
                try db.execute(
                    "INSERT INTO images (url, data, content_type, size, stored_at, last_access_at) VALUES ('new', x'01', NULL, 1, 0, 0)"
                )
            }
            #expect(try await changes.next().changes == [Change(kind: .image, key: "new", operation: .insert)])
        }
    }

    @Test func anInsertThenDeleteInOneWriteIsADelete() async throws {
        try await withTemporaryStore { store, _ throws in
            let changes = StreamProbe(await store.changesFromNow())
            try await store.write { db in
                try db.execute(Self.insertFramework, ["brief"])
                try db.execute("DELETE FROM frameworks WHERE id = 'brief'")
            }
            #expect(try await changes.next().changes == [Change(kind: .framework, key: "brief", operation: .delete)])
        }
    }
}

/// The collector on a bare writer connection, for what the store's own tables cannot show: a
/// WITHOUT ROWID table, and the hooks' view of commit and rollback.
@Suite("Change collector hooks")
struct ChangeCollectorTests {
    static let table = ObservedKindTable(.event, ObservedTable(table: "notes", keyColumn: "id", dateColumn: "day"))

    static func connection(in directory: TemporaryDirectory, withoutRowID: Bool) throws -> Database {
        let db = try Database(path: directory.databasePath, options: .init())
        try db.execute(
            "CREATE TABLE notes (id TEXT PRIMARY KEY NOT NULL, day TEXT NOT NULL, body TEXT)\(withoutRowID ? " WITHOUT ROWID" : "")"
        )
        db.collectChanges(of: [table])
        try db.changeCollector!.resolveColumnsIfNeeded(db)
        return db
    }

    /// "The update hook is not invoked when WITHOUT ROWID tables are modified"; the pre-update
    /// hook is, so such a table is observed exactly like a rowid table.
    @Test(arguments: [false, true])
    func everyRowChangeIsCollectedWithOrWithoutRowID(withoutRowID: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let db = try Self.connection(in: directory, withoutRowID: withoutRowID)
            let collector = db.changeCollector!
            try db.execute("BEGIN")
            _ = collector.beginWrite()
            try db.execute("INSERT INTO notes VALUES ('a', '2026-01-01', 'x'), ('b', '2026-01-02', 'y')")
            try db.execute("COMMIT")
            #expect(
                collector.takeCommitted() == [
                    Change(kind: .event, key: "a", operation: .insert, dates: [Fixtures.date("2026-01-01")]),
                    Change(kind: .event, key: "b", operation: .insert, dates: [Fixtures.date("2026-01-02")]),
                ])
            try db.execute("BEGIN")
            _ = collector.beginWrite()
            try db.execute("UPDATE notes SET day = '2026-01-05' WHERE id = 'a'")
            try db.execute("DELETE FROM notes")
            try db.execute("COMMIT")
            #expect(
                collector.takeCommitted() == [
                    Change(
                        kind: .event, key: "a", operation: .delete,
                        dates: [Fixtures.date("2026-01-01"), Fixtures.date("2026-01-05")]),
                    Change(kind: .event, key: "b", operation: .delete, dates: [Fixtures.date("2026-01-02")]),
                ])
        }
    }

    @Test func aRolledBackTransactionLeavesNothing() async throws {
        try await withTemporaryDirectory { directory in
            let db = try Self.connection(in: directory, withoutRowID: false)
            let collector = db.changeCollector!
            try db.execute("BEGIN")
            _ = collector.beginWrite()
            try db.execute("INSERT INTO notes VALUES ('a', '2026-01-01', 'x')")
            #expect(collector.pending.count == 1)
            try db.execute("ROLLBACK")
            #expect(collector.pending.isEmpty)
            #expect(collector.takeCommitted().isEmpty)
        }
    }
}
