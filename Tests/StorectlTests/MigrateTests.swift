import Foundation
import Testing

@Suite("storectl migrate")
struct MigrateTests {
    static let known = ["0001_create_frameworks", "0002_create_orders", "0003_create_events", "0004_create_images"]

    /// `NNNN_name` for each entry of `migrate status --json`.
    func identifiers(_ statuses: [[String: Any]]) -> [String] {
        statuses.map { status in
            let version = JSON.integer(status["version"]) ?? -1
            let digits = String(version)
            return String(repeating: "0", count: max(0, 4 - digits.count)) + digits + "_" + (status["name"] as? String ?? "?")
        }
    }

    func status(_ storectl: Storectl, _ db: String) async throws -> [[String: Any]] {
        try JSON.array(expectSuccess(try await storectl("migrate", "status", "--json", "--db", db)).stdout)
    }

    func tableCount(_ db: String) async throws -> Int {
        Int(try await sqlite3(db, "SELECT count(*) FROM sqlite_master")) ?? -1
    }

    @Test("--dry-run on a fresh file lists every migration as 'would apply' and creates no tables")
    func dryRun() async throws {
        let storectl = try Storectl()
        let db = try storectl.directory.write(Data(), to: "fresh.sqlite") // empty: a new store
        let result = expectSuccess(try await storectl("migrate", "--dry-run", "--db", db))
        let afterDryRun = try await tableCount(db)
        #expect(afterDryRun == 0, "a dry run changes nothing")

        let statuses = try await status(storectl, db)
        let expected = identifiers(statuses)
        #expect(expected.starts(with: Self.known), "\(expected)")
        #expect(result.lines == expected.map { "would apply \($0)" })
        let afterStatus = try await tableCount(db)
        #expect(afterStatus == 0, "status changes nothing either")
        #expect(try await sqlite3(db, ".tables") == "")
    }

    @Test("migrate applies each migration once, then reports up to date")
    func migrate() async throws {
        let storectl = try Storectl()
        let db = try storectl.directory.write(Data(), to: "fresh.sqlite") // empty: a new store
        let expected = identifiers(try await status(storectl, db))

        let first = expectSuccess(try await storectl("migrate", "--db", db))
        #expect(first.lines == expected.map { "applied \($0)" })

        let second = expectSuccess(try await storectl("migrate", "--db", db))
        #expect(second.lines.count == 1)
        #expect(second.output.contains("up to date"))
        let dry = expectSuccess(try await storectl("migrate", "--dry-run", "--db", db))
        #expect(dry.output.contains("up to date") && !dry.output.contains("would apply"))

        #expect(try await sqlite3(db, "SELECT count(*) FROM schema_migrations") == String(expected.count))
        let tables = Set(
            try await sqlite3(db, "SELECT name FROM sqlite_master WHERE type = 'table'").split(separator: "\n").map(String.init))
        #expect(tables.isSuperset(of: ["frameworks", "orders", "order_items", "events", "images", "schema_migrations"]))
    }

    @Test("any other command migrates a fresh store on first use")
    func migrateOnFirstUse() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("events", "add", "--id", "e", "--title", "t", "--date", "2026-06-08"))
        let statuses = try await status(storectl, storectl.db)
        #expect(!statuses.isEmpty && statuses.allSatisfy { $0["state"] as? String == "applied" })
        #expect(expectSuccess(try await storectl("migrate")).output.contains("up to date"))
    }

    @Test("migrate status and status --json: pending before, applied after")
    func status() async throws {
        let storectl = try Storectl()
        let db = try storectl.directory.write(Data(), to: "fresh.sqlite") // empty: a new store
        let before = try await status(storectl, db)
        #expect(identifiers(before).starts(with: Self.known))
        for entry in before {
            #expect(Set(entry.keys) == ["version", "name", "state", "checksum", "appliedAt"])
            #expect(entry["state"] as? String == "pending")
            #expect(entry["appliedAt"] is NSNull, "appliedAt is null while pending")
            let checksum = try #require(entry["checksum"] as? String)
            #expect(checksum.count == 64 && checksum.allSatisfy { "0123456789abcdef".contains($0) }, "\(checksum)")
        }
        let pendingTable = expectSuccess(try await storectl("migrate", "status", "--db", db)).lines
        #expect(pendingTable.first?.hasPrefix("MIGRATION") == true)
        #expect(pendingTable.count == before.count + 2)
        #expect(pendingTable.dropFirst(2).allSatisfy { $0.contains("pending") })

        let started = Date()
        expectSuccess(try await storectl("migrate", "--db", db))
        let after = try await status(storectl, db)
        #expect(identifiers(after) == identifiers(before))
        for (entry, old) in zip(after, before) {
            #expect(entry["state"] as? String == "applied")
            #expect(entry["checksum"] as? String == old["checksum"] as? String)
            let appliedAt = try #require(entry["appliedAt"] as? String)
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let date = try #require(
                formatter.date(from: appliedAt) ?? ISO8601DateFormatter().date(from: appliedAt), "\(appliedAt)")
            #expect(date.timeIntervalSince(started) > -2 && date.timeIntervalSinceNow < 2, "\(appliedAt)")
        }
        let appliedTable = expectSuccess(try await storectl("--db", db, "migrate", "status")).lines
        for identifier in identifiers(after) {
            #expect(
                appliedTable.contains { $0.hasPrefix(identifier) && $0.contains("applied") }, "\(identifier): \(appliedTable)")
        }
    }

    @Test("a file that is not a database is refused, naming it")
    func notADatabase() async throws {
        let storectl = try Storectl()
        let path = try storectl.directory.write(Data(String(repeating: "not a database\n", count: 100).utf8), to: "text.sqlite")
        expectFailure(try await storectl("migrate", "--db", path), mentioning: [path])
        expectFailure(try await storectl("frameworks", "list", "--db", path), mentioning: [path])
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("not a database"), "left unchanged")
    }

    // Issue 12, item 10.
    @Test("migrate --dry-run reports an unknown or an edited migration and exits 1, like every other command")
    func dryRunReportsRefusal() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        _ = try await sqlite3(
            storectl.db, "INSERT INTO schema_migrations VALUES (9999, 'from_the_future', 'abc', '2030-01-01T00:00:00Z')")
        expectFailure(try await storectl("migrate", "--dry-run"), status: 1, mentioning: [storectl.db, "9999_from_the_future"])
        expectFailure(try await storectl("migrate"), status: 1, mentioning: ["9999_from_the_future"])
        _ = try await sqlite3(
            storectl.db,
            "DELETE FROM schema_migrations WHERE version = 9999; UPDATE schema_migrations SET checksum = 'edited' WHERE version = 1"
        )
        expectFailure(
            try await storectl("migrate", "--dry-run"), status: 1,
            mentioning: [storectl.db, "0001_create_frameworks as applied to this database differs from this build's"])
    }
}
