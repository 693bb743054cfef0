import Foundation
import Store
import Testing

/// Inputs a careless user (or a file edited around the store) brings: each refused with an
/// error naming it, the store unchanged, never a crash or a hang.
@Suite(.timeLimit(.minutes(10)))
struct CarelessInputTests {
    @Test("a stored placed_at beyond years 0001-9999 fails list and show with an error, not a trap")
    func storedTimesOutOfRange() async throws {
        let cli = try Storectl()
        expectSuccess(try await cli("orders", "add", "--id", "ok", "--item", "A:1:1"))
        for value in ["9223372036854775807", "-9223372036854775808", "1e300"] {
            _ = try await sqlite3(cli.db, "UPDATE orders SET placed_at = \(value)")
            for arguments in [["orders", "list"], ["orders", "show", "ok"], ["orders", "list", "--json"]] {
                // Status 132 and "Double value cannot be converted to Int64" before.
                let result = try await cli.run(arguments)
                expectFailure(result, status: 1, mentioning: ["ok", "placedAt"])
                #expect(result.stderr.contains("0001 to 9999") || result.stderr.contains("1e+300 is not an integer"), "\(result)")
            }
        }
    }

    @Test(
        "a stored order column that is not an integer (text, a real, a blob) fails naming the order and field; it read as 0",
        arguments: [
            ("orders", "placed_at", "'abc'", "placedAt", "'abc'"),
            ("orders", "placed_at", "1700000000000.5", "placedAt", "1700000000000.5"),
            ("order_items", "price_cents", "'cheap'", "items[0].price", "'cheap'"),
            ("order_items", "aisle", "X'01'", "items[0].aisle", "a blob of 1 byte)"),
            ("order_items", "quantity", "2.5", "items[0].quantity", "2.5"),
        ])
    func storedValuesOfAnotherType(_ table: String, _ column: String, _ value: String, _ field: String, _ shown: String)
        async throws
    {
        let cli = try Storectl()
        expectSuccess(try await cli("orders", "add", "--id", "ok", "--item", "A:1:1"))
        _ = try await sqlite3(cli.db, "UPDATE \(table) SET \(column) = \(value)")
        // Written around the store: the premise is that SQLite kept the value's own type.
        #expect(try await sqlite3(cli.db, "SELECT typeof(\(column)) FROM \(table)") != "integer")
        for arguments in [["orders", "list"], ["orders", "show", "ok"], ["orders", "total", "ok"], ["export"]] {
            // 'abc' was an order placed in 1970, 2.5 a quantity of 2.
            let result = try await cli.run(arguments)
            expectFailure(result, status: 1, mentioning: ["ok", field, shown, "is not an integer"])
        }
    }

    /// An order a write would refuse, made around the store's CHECKs: it was listed, exported and
    /// published as it was, and every client's sync then refused the store's own feed.
    @Test(
        "a stored order without items, or with a negative aisle, fails every read naming the order and field",
        arguments: [
            ("DELETE FROM order_items", "items", "at least one item"),
            ("UPDATE order_items SET aisle = -1", "items[0].aisle", "-1 is negative"),
        ])
    func storedOrdersAWriteWouldRefuse(_ change: String, _ field: String, _ reason: String) async throws {
        let cli = try Storectl()
        expectSuccess(try await cli("orders", "add", "--id", "ok", "--item", "A:1:1"))
        _ = try await sqlite3(cli.db, "PRAGMA ignore_check_constraints = 1; \(change)")
        for arguments in [
            ["orders", "list"], ["orders", "show", "ok"], ["orders", "total", "ok"], ["export"],
            ["publish", cli.directory.file("pub")],
        ] {
            let result = try await cli.run(arguments)
            expectFailure(result, status: 1, mentioning: ["order 'ok'", field, reason, "(as stored)"])
        }
        #expect(!FileManager.default.fileExists(atPath: cli.directory.file("pub/manifest.json")))
        // The ways to repair it still work (they read the stored order to change it): an update
        // of its items, and a sync that may update it.
        expectSuccess(try await cli("orders", "update", "ok", "--item", "A:1:2"))
        expectSuccess(try await cli("orders", "list"))
        _ = try await sqlite3(cli.db, "PRAGMA ignore_check_constraints = 1; \(change)")
        let feed = cli.directory.file("repair.json")
        try Data(
            #"{"version": 1, "orders": [{"id": "ok", "placedAt": "2026-11-20T09:30:00Z", "items": [{"itemName": "A", "price": 1, "aisle": 1}]}]}"#
                .utf8
        ).write(to: URL(fileURLWithPath: feed))
        expectSuccess(try await cli("sync", feed, "--policy", "prefer-remote"))
        expectSuccess(try await cli("orders", "show", "ok"))
    }

    /// Image sizes and times changed around the store were read as they came: a size near 2^63
    /// trapped `images stats` (exit 132), text read as 0 bytes or 1970, and times out of range
    /// printed as 0001 or 9999.
    @Test(
        "a stored image size or time the store could not have written fails the reads naming the image and field",
        arguments: [
            ("size", "9223372036854775807", "size", "outside 0 to 2147483647"),
            ("size", "-5", "size", "outside 0 to 2147483647"),
            ("size", "'big'", "size", "'big' is not an integer"),
            ("stored_at", "'yesterday'", "storedAt", "'yesterday' is not an integer"),
            ("last_access_at", "9223372036854775807", "lastAccessAt", "outside years 0001 to 9999"),
        ])
    func storedImageValuesOutOfBounds(_ column: String, _ value: String, _ field: String, _ reason: String) async throws {
        let cli = try Storectl()
        let file = cli.directory.file("a.png")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: file))
        expectSuccess(try await cli("images", "put", "a.png", file))
        _ = try await sqlite3(cli.db, "PRAGMA ignore_check_constraints = 1; UPDATE images SET \(column) = \(value)")
        var reads = [["images", "list"], ["images", "list", "--json"]]
        if column == "size" { reads += [["images", "stats"], ["images", "stats", "--json"], ["images", "prune"]] }
        if column != "size" { reads += [["export"]] }
        // `get` first marks the entry used (a valid last access time), then reads it.
        if column == "stored_at" { reads += [["images", "get", "a.png", "--out", cli.directory.file("out.png")]] }
        for arguments in reads {
            let result = try await cli.run(arguments)
            expectFailure(result, status: 1, mentioning: ["image 'a.png'", field, reason])
        }
    }

    /// `events dates` and `events calendar` named such an event `event '?'`: their query read
    /// the dates alone.
    @Test("a stored event date that is no calendar date fails the month views naming the event")
    func storedEventDatesInMonthViews() async throws {
        let cli = try Storectl()
        expectSuccess(try await cli("events", "add", "--id", "e-7", "--title", "T", "--date", "2026-06-08"))
        _ = try await sqlite3(cli.db, "PRAGMA ignore_check_constraints = 1; UPDATE events SET date = '2026-06-1x'")
        for arguments in [["events", "dates", "--month", "2026-06"], ["events", "calendar", "2026-06"], ["events", "list"]] {
            expectFailure(
                try await cli.run(arguments), status: 1, mentioning: ["event 'e-7'", "'2026-06-1x'", "not a calendar date"])
        }
    }

    @Test("an offset that moves the time out of years 0001-9999 is refused where it is parsed")
    func timesMovedOutOfRangeByTheirOffset() async throws {
        let cli = try Storectl()
        for time in ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"] {
            expectFailure(
                try await cli("orders", "add", "--id", "t", "--placed-at", time, "--item", "A:1:1"), status: exitUsage,
                mentioning: ["--placed-at", "outside years 0001 to 9999 once its offset is applied"])
        }
        // RFC 3339 allows second 60 (a leap second); a Date cannot name it. It used to read as
        // "not an RFC 3339 timestamp" in a feed, and "is invalid" with no reason here.
        expectFailure(
            try await cli("orders", "add", "--id", "t", "--placed-at", "2016-12-31T23:59:60Z", "--item", "A:1:1"),
            status: exitUsage, mentioning: ["--placed-at", "leap second"])
        expectFailure(
            try await cli("orders", "add", "--id", "t", "--placed-at", "2016-12-31", "--item", "A:1:1"),
            status: exitUsage, mentioning: ["--placed-at", "not an RFC 3339 timestamp"])
        expectSuccess(try await cli("orders", "add", "--id", "t", "--placed-at", "0001-01-01T00:00:00Z", "--item", "A:1:1"))
        expectSuccess(try await cli("orders", "add", "--id", "u", "--placed-at", "9999-12-31T23:59:59.999Z", "--item", "A:1:1"))
        // What a list shows, an export carries and a sync takes back.
        let feed = cli.directory.file("e.json")
        expectSuccess(try await cli("export", "--out", feed))
        expectSuccess(try await cli("--db", "copy.sqlite", "sync", feed, "--quiet"))
    }

    @Test("a FIFO or a device as --db is refused at once")
    func specialFilesAsTheStore() async throws {
        let cli = try Storectl()
        let fifo = cli.directory.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        for path in [fifo, "/dev/null"] {
            // Opening the FIFO waited for a writer forever, and SIGTERM could not end it.
            expectFailure(try await cli("--db", path, "frameworks", "list"), status: 1, mentioning: [path, "not a regular file"])
        }
    }

    @Test("an item field with a + sign is refused, not read as another field")
    func signedItemFields() async throws {
        let cli = try Storectl()
        // "X:1:1:+5" was one item named "X:1", price 1.00, aisle 5, quantity 1.
        for item in ["X:1:1:+5", "X:1:+1", "X:1:+1:2"] {
            expectFailure(try await cli("orders", "add", "--id", "q", "--item", item), status: exitUsage, mentioning: ["--item"])
        }
        #expect(!FileManager.default.fileExists(atPath: cli.db))
    }

    @Test("an id holding NUL is refused with its JSON path, not a raw SQLite error")
    func nulInAnID() async throws {
        let cli = try Storectl()
        let feed = cli.directory.file("nul.json")
        try Data(#"{"version": 1, "events": [{"id": "\u0000x", "title": "T", "date": "2026-01-01"}]}"#.utf8)
            .write(to: URL(fileURLWithPath: feed))
        expectFailure(try await cli("sync", feed), status: 1, mentioning: ["events[0].id", "NUL"])
        #expect(!FileManager.default.fileExists(atPath: cli.db))
    }

    @Test("a store whose schema_migrations table was dropped is refused, byte for byte unchanged")
    func storeWithoutItsMigrationRecords() async throws {
        let cli = try Storectl()
        expectSuccess(
            try await cli(
                "frameworks", "add", "--id", "a", "--name", "A", "--image-name", "a", "--url", "https://a", "--description", "d"))
        _ = try await sqlite3(cli.db, "PRAGMA journal_mode = DELETE; DROP TABLE schema_migrations")
        let before = try Data(contentsOf: URL(fileURLWithPath: cli.db))
        // It failed "migration 0001", after committing an empty schema_migrations.
        for arguments in [["frameworks", "list"], ["migrate", "--dry-run"], ["migrate"]] {
            expectFailure(try await cli.run(arguments), status: 1, mentioning: ["schema_migrations", "missing"])
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: cli.db)) == before)
    }

    @Test("watch on a store removed under it says so and exits 1, instead of watching the old file forever")
    func watchedStoreRemoved() async throws {
        let cli = try Storectl()
        expectSuccess(try await cli("migrate"))
        let script = """
            timeout 60 "$0" --db "$1" watch 2> watch.err &
            pid=$!
            # Removed once the watch has the store open (it says "watching"), however slow the start.
            for i in $(seq 500); do grep -q watching watch.err && break; sleep 0.1; done
            rm -f "$1" "$1-wal" "$1-shm"
            wait $pid
            echo "exit $?"
            cat watch.err
            """
        let result = try await cli.run(["-c", script, try Storectl.executableURL().path, cli.db], shell: true)
        #expect(result.stdout.contains("exit 1"), "\(result)")
        #expect(result.stdout.contains("removed or replaced"), "\(result)")
    }

    @Test("the -shm removed by hand while watch runs: watch exits 1 without closing the store, and no confirmed write is lost")
    func watchedStoreLosesItsIndex() async throws {
        let cli = try Storectl()
        expectSuccess(try await cli("migrate"))
        // Other processes confirm 30 orders; the -shm goes after the 10th. The watch, closing
        // last with the old index, checkpointed and deleted the WAL: 20 confirmed orders lost.
        let script = """
            timeout 60 "$0" --db "$1" watch 2> watch.err > watch.out &
            pid=$!
            for i in $(seq 500); do grep -q watching watch.err && break; sleep 0.1; done
            for i in $(seq 30); do
                "$0" --db "$1" orders add --id "o-$i" --item A:1:1 > /dev/null || echo "add $i failed"
                [ "$i" = 10 ] && rm -f "$1-shm"
            done
            wait $pid
            echo "exit $?"
            cat watch.err
            """
        let result = try await cli.run(["-c", script, try Storectl.executableURL().path, cli.db], shell: true, timeout: 120)
        #expect(result.stdout.contains("exit 1"), "\(result)")
        #expect(result.stdout.contains("-shm was removed or replaced"), "\(result)")
        #expect(!result.stdout.contains("failed"), "\(result)")
        let orders = try JSON.array(expectSuccess(try await cli("orders", "list", "--json")).stdout)
        #expect(orders.count == 30)
        #expect(try await sqlite3(cli.db, "PRAGMA integrity_check") == "ok")
    }

    /// SQLite's rule is never to delete a store's -wal or -shm while it is open. Deleted all the
    /// same under an app's open store, the app kept its own (unlinked) files, or its stale WAL
    /// index, while storectl made new ones. The app's next commit (even a failed sync's history
    /// row) wrote over storectl's frames, and its close, the last on its own -shm, checkpointed
    /// its stale WAL and deleted the *new* -wal and -shm by name: storectl's confirmed order was
    /// gone. Every write of the store now fails once one of its files was replaced, and it
    /// closes without a checkpoint when its -wal or -shm was.
    @Test(
        "an app's store whose -wal or -shm was deleted syncs nothing and closes without a checkpoint: storectl's orders stay",
        arguments: [["-wal", "-shm"], ["-shm"]])
    func walDeletedUnderAnOpenStore(_ removed: [String]) async throws {
        let cli = try Storectl()
        expectSuccess(try await cli("orders", "add", "--id", "before", "--item", "A:1:1")) // the schema in the file
        let feed = cli.directory.file("feed.json")
        try Data(
            #"{"version": 1, "frameworks": [{"id": "fed", "name": "F", "imageName": "f", "urlString": "https://e.com/f", "description": "d"}]}"#
                .utf8
        ).write(to: URL(fileURLWithPath: feed))
        let app = try await Store.open(at: cli.db)
        try await app.orders.insert(
            Order(id: "app", placedAt: Date(), items: [OrderItem(itemName: "B", price: Money(minorUnits: 1), aisle: 1)]))
        #expect(try await app.orders.count() == 2) // a reader connection open too
        for suffix in removed { #expect(unlink(cli.db + suffix) == 0) }
        expectSuccess(try await cli("orders", "add", "--id", "confirmed", "--item", "A:1:1"))
        // Every write fails now: through the app's stale WAL index, even the failed sync's
        // history row overwrote storectl's confirmed order.
        await #expect(throws: StoreError.storeMoved(path: cli.db + removed[0])) { try await app.sync(from: FeedSource(feed)) }
        await #expect(throws: StoreError.storeMoved(path: cli.db + removed[0])) {
            try await app.orders.insert(
                Order(id: "late", placedAt: Date(), items: [OrderItem(itemName: "C", price: Money(minorUnits: 1), aisle: 1)]))
        }
        await app.close()
        let ids = try JSON.array(expectSuccess(try await cli("orders", "list", "--json")).stdout).compactMap {
            $0["id"] as? String
        }
        #expect(ids.contains("confirmed"), "\(ids)")
        #expect(ids.contains("before"), "\(ids)")
        #expect(!ids.contains("fed"))
        #expect(try await sqlite3(cli.db, "PRAGMA integrity_check") == "ok")
    }
}
