import Foundation
import Testing

@testable import Store

/// `Store.vacuum()`: the file gives back the pages deleted records left free; nothing else changes.
@Suite("Vacuum")
struct VacuumTests {
    @Test("after deleting most records, vacuum shrinks the file; records, change log and observers unchanged")
    func shrinksAndChangesNothingElse() async throws {
        try await withTemporaryStore { store, directory throws in
            let padding = String(repeating: "x", count: 2_000)
            try await store.frameworks.insert(
                (0..<3_000).map {
                    Framework(
                        id: "f\($0)", name: "F", imageName: "f", urlString: "https://f/\($0)", description: padding)
                })
            try await store.write { db in try db.execute("DELETE FROM frameworks WHERE id <> 'f7'") }
            let kept = try await store.frameworks.fetchAll()
            let lastLogged = try await store.read { try ChangeLogTable(db: $0).latestTransaction() }
            let changes = await store.changesFromNow()
            var batches = changes.makeAsyncIterator()

            let (before, after) = try await store.vacuum()
            #expect(before > 6_000_000, "\(before)")
            #expect(after < before / 10, "\(before) -> \(after)")
            // No reader held a snapshot: the checkpoint copied it into the file.
            let onDisk = (try FileManager.default.attributesOfItem(atPath: directory.databasePath)[.size] as? Int) ?? 0
            #expect(onDisk == after, "the file holds \(onDisk) bytes")

            #expect(try await store.frameworks.fetchAll() == kept)
            #expect(try await store.read { try ChangeLogTable(db: $0).latestTransaction() } == lastLogged)
            #expect(try await store.read { try $0.fetchOne("PRAGMA integrity_check")?[0].textValue } == "ok")
            // The next batch an observer hears is the next write's, alone.
            try await store.frameworks.insert(Fixtures.framework("after"))
            let batch = try #require(await batches.next())
            #expect(batch.changes.map(\.key) == ["after"])
        }
    }
}
