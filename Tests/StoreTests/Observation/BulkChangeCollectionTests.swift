import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// A bulk insert into a table keyed by its primary key hashes no keys (`ChangeCollector.record`
/// looks only among the span's deletions); the coalescing rules still hold around it.
@Suite("Bulk change collection", .timeLimit(.minutes(10)))
struct BulkChangeCollectionTests {
    static let insert =
        "INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES (?, 'Bulk', 'bulk', 'https://example.com/b', 'd')"

    @Test func changesAfterABulkInsertMergeIntoTheInsertsTheyFollow() async throws {
        try await withTemporaryStore { store, _ throws in
            let changes = StreamProbe(await store.changesFromNow())
            try await store.write { db in
                for index in 0..<50 { try db.execute(Self.insert, [.text("fw-\(index)")]) }
                // An update of a record inserted earlier in the write: still an insert.
                try db.execute("UPDATE frameworks SET name = 'Renamed' WHERE id = 'fw-3'")
                // Deleted, then inserted again: insert + delete = delete, delete + insert = update.
                try db.execute("DELETE FROM frameworks WHERE id = 'fw-7'")
                try db.execute(Self.insert, ["fw-7"])
                // New inserts while a deletion is on record: looked up, not found, appended.
                try db.execute(Self.insert, ["fw-50"])
                try db.execute("DELETE FROM frameworks WHERE id = 'fw-50'")
            }
            let batch = try await changes.next().changes
            var expected = (0..<50).map { Change(kind: .framework, key: "fw-\($0)", operation: .insert) }
            expected[7] = Change(kind: .framework, key: "fw-7", operation: .update)
            expected.append(Change(kind: .framework, key: "fw-50", operation: .delete))
            #expect(batch == expected)
        }
    }

    @Test func aRolledBackSavepointDropsTheBulkInsertsAfterIt() async throws {
        try await withTemporaryStore { store, _ throws in
            let changes = StreamProbe(await store.changesFromNow())
            try await store.write { db in
                try db.execute(Self.insert, ["kept"])
                try db.execute("DELETE FROM frameworks WHERE id = 'kept'")
                try db.execute("SAVEPOINT attempt")
                for index in 0..<10 { try db.execute(Self.insert, [.text("dropped-\(index)")]) }
                try db.execute(Self.insert, ["kept"])
                try db.execute("ROLLBACK TO SAVEPOINT attempt")
                try db.execute("RELEASE SAVEPOINT attempt")
                try db.execute(Self.insert, ["after"])
            }
            #expect(
                try await changes.next().changes == [
                    Change(kind: .framework, key: "kept", operation: .delete),
                    Change(kind: .framework, key: "after", operation: .insert),
                ])
        }
    }
}
