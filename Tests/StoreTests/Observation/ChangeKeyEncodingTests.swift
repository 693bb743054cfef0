import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// The change hook reads a key's bytes in place in a UTF-8 database and converts it through
/// SQLite in any other encoding (`ChangeCollector.text`): observers get the same keys either way.
@Suite("Change keys in every text encoding", .timeLimit(.minutes(10)))
struct ChangeKeyEncodingTests {
    /// Short (inline in a Swift string), long, and non-ASCII keys, in two and four UTF-8 bytes.
    static let keys = ["fw-1", "a-key-longer-than-fifteen-bytes", "café-über-日本", "emoji-😀-key"]

    /// Inserts, updates and deletes each key in three writes; the keys each write reports.
    static func observedKeys(of store: Store) async throws -> [[Change]] {
        let changes = StreamProbe(await store.changesFromNow())
        try await store.write { db in
            for key in keys {
                try db.frameworks.insert(
                    Framework(id: key, name: "n", imageName: "i", urlString: "https://example.com", description: "d"))
            }
        }
        try await store.write { db in
            for key in keys { try db.execute("UPDATE frameworks SET name = 'm' WHERE id = ?", [.text(key)]) }
        }
        try await store.write { db in
            for key in keys { try db.execute("DELETE FROM frameworks WHERE id = ?", [.text(key)]) }
        }
        return [try await changes.next().changes, try await changes.next().changes, try await changes.next().changes]
    }

    static let expected: [[Change]] = [Change.Operation.insert, .update, .delete].map { operation in
        keys.map { Change(kind: .framework, key: $0, operation: operation) }
    }

    @Test func aUTF8DatabaseReportsEveryKeyAsWritten() async throws {
        try await withTemporaryStore { store, _ throws in
            #expect(try await Self.observedKeys(of: store) == Self.expected)
        }
    }

    @Test func aUTF16DatabaseReportsEveryKeyAsWritten() async throws {
        try await TemporaryDirectory.with { directory in
            // The encoding is fixed by the file's first table; the store's migrations follow.
            do {
                let db = try Database(path: directory.databasePath, options: .init())
                try db.executeScript("PRAGMA encoding = 'UTF-16le'; CREATE TABLE first (x); DROP TABLE first;")
                #expect(try db.fetchOne("PRAGMA encoding")?[0] == .text("UTF-16le"))
                db.close()
            }
            let store = try await Store.open(at: directory.databasePath)
            do {
                #expect(try await Self.observedKeys(of: store) == Self.expected)
                await store.close()
            } catch {
                await store.close()
                throw error
            }
        }
    }
}
