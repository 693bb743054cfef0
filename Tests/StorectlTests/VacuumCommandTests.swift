import Foundation
import Testing

@Suite("storectl vacuum")
struct VacuumCommandTests {
    @Test("after deleting most records: the file shrinks, the sizes are printed, the rest is kept")
    func shrinks() async throws {
        let storectl = try Storectl()
        let feed = try storectl.directory.write(frameworksFeed(count: 2_000, descriptionBytes: 1500), to: "big.json")
        expectSuccess(try await storectl("sync", feed))
        _ = try await sqlite3(storectl.db, "DELETE FROM frameworks WHERE id <> 'f1'")
        let before = (try FileManager.default.attributesOfItem(atPath: storectl.db)[.size] as? Int) ?? 0
        let result = expectSuccess(try await storectl("vacuum"))
        #expect(result.stdout.hasPrefix("vacuumed \(storectl.db): ") && result.stdout.contains(" MB -> "), "\(result)")
        let after = (try FileManager.default.attributesOfItem(atPath: storectl.db)[.size] as? Int) ?? 0
        #expect(after < before / 10, "\(before) -> \(after)")
        #expect(try await sqlite3(storectl.db, "SELECT id FROM frameworks") == "f1")
        #expect(try await sqlite3(storectl.db, "PRAGMA integrity_check") == "ok")
        #expect(!FileManager.default.fileExists(atPath: storectl.db + "-wal"))
    }

    @Test("a store that does not exist: exit 1, nothing created")
    func missingStore() async throws {
        let storectl = try Storectl()
        let result = try await storectl.run(["vacuum"])
        #expect(result.status == 1, "\(result)")
        #expect(!FileManager.default.fileExists(atPath: storectl.db))
    }

    @Test("another process holds the write lock past --busy-timeout: exit 1, saying so, the store unchanged")
    func writeLockHeld() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        let before = try Data(contentsOf: URL(fileURLWithPath: storectl.db))
        let holder = try await WriteLockHolder(storectl.db)
        let result = try await storectl.run(["--busy-timeout", "1", "vacuum"])
        await holder.release()
        expectFailure(result, status: 1, mentioning: [storectl.db, "another process holds the write lock", "waited 1 s"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: storectl.db)) == before)
    }
}
