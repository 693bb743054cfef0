import Foundation
import Testing

/// The store is a plain SQLite file: the stock sqlite3 CLI reads what storectl wrote, and
/// storectl reads what sqlite3 wrote.
@Suite("storectl and the sqlite3 CLI")
struct SQLiteInteropTests {
    static let sqlite3Path = "/usr/bin/sqlite3"

    @Test(
        "sqlite3 opens a store storectl wrote: integrity ok, every table, exact data",
        .enabled(if: FileManager.default.isExecutableFile(atPath: sqlite3Path)))
    func sqliteReadsStore() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", "arkit", "--name", "ARKit", "--image-name", "arkit",
                "--url", "https://example.com", "--description", "AR."))
        expectSuccess(
            try await storectl(
                "orders", "add", "--id", "o1", "--placed-at", "2026-11-20T09:30:00Z",
                "--item", "A:0.10:1", "--item", "B:0.20:2:3"))
        expectSuccess(try await storectl("events", "add", "--id", "e1", "--title", "T", "--date", "2026-06-08"))
        expectSuccess(try await storectl("images", "put", "img", try storectl.directory.write(Data([1, 2, 3]), to: "i.png")))

        #expect(try await sqlite3(storectl.db, "PRAGMA integrity_check") == "ok")
        #expect(try await sqlite3(storectl.db, "PRAGMA journal_mode") == "wal")

        let schema = try await sqlite3(storectl.db, ".schema")
        for table in ["frameworks", "orders", "order_items", "events", "images", "schema_migrations"] {
            #expect(
                schema.contains("CREATE TABLE \(table) (") || schema.contains("CREATE TABLE IF NOT EXISTS \(table)")
                    || schema.contains("CREATE TABLE \"\(table)\""), "\(table) in .schema")
        }
        let tables = Set(try await sqlite3(storectl.db, ".tables").split(whereSeparator: \.isWhitespace).map(String.init))
        #expect(
            tables.isSuperset(of: ["frameworks", "orders", "order_items", "events", "images", "schema_migrations"]), "\(tables)")

        // Money is stored exactly, in cents; times in milliseconds.
        #expect(try await sqlite3(storectl.db, "SELECT price_cents, quantity FROM order_items ORDER BY position") == "10|1\n20|3")
        #expect(try await sqlite3(storectl.db, "SELECT placed_at FROM orders") == "1795167000000")
        #expect(try await sqlite3(storectl.db, "SELECT id, date FROM events") == "e1|2026-06-08")
        #expect(try await sqlite3(storectl.db, "SELECT hex(data), size FROM images") == "010203|3")
    }

    @Test(
        "storectl reads rows the sqlite3 CLI inserted",
        .enabled(if: FileManager.default.isExecutableFile(atPath: sqlite3Path)))
    func storeReadsSQLite() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        _ = try await sqlite3(
            storectl.db,
            """
            INSERT INTO frameworks (id, name, image_name, url_string, description)
            VALUES ('metal', 'Metal', 'metal', 'https://developer.apple.com/metal/', 'GPU.');
            INSERT INTO events (id, title, date, notes) VALUES ('e9', 'From the CLI', '2026-06-09', NULL);
            """)
        let metal = try JSON.object(expectSuccess(try await storectl("frameworks", "show", "metal", "--json")).stdout)
        #expect(metal["urlString"] as? String == "https://developer.apple.com/metal/")
        #expect(metal["description"] as? String == "GPU.")
        let dates = try JSON.array(expectSuccess(try await storectl("events", "dates", "--month", "2026-06", "--json")).stdout)
        #expect(dates.map { $0["date"] as? String } == ["2026-06-09"])
        // The schema's CHECK refuses an impossible date even from the CLI.
        await #expect(throws: SQLite3Failed.self) {
            try await sqlite3(storectl.db, "INSERT INTO events (id, title, date) VALUES ('bad', 'x', '2026-02-30')")
        }
    }
}
