import Foundation
import Testing

/// Issue 12, item 12 and "errors that mislead": bad arguments exit 64, refusals exit 1,
/// and every message names the path or argument at fault and says why.
@Suite("storectl: usage errors and messages that say what is wrong")
struct UsageErrorTests {
    @Test("an empty --db or STORECTL_DB is a usage error, not the default store")
    func emptyDatabasePath() async throws {
        let storectl = try Storectl()
        let defaultStore = storectl.dataHome + "/storectl/store.sqlite"
        expectFailure(try await storectl("--db", "", "frameworks", "list"), status: exitUsage, mentioning: ["--db"])
        expectFailure(try await storectl("frameworks", "list", "--db="), status: exitUsage, mentioning: ["--db"])
        expectFailure(
            try await storectl("frameworks", "list", environment: ["STORECTL_DB": ""]), status: exitUsage,
            mentioning: ["STORECTL_DB"])
        #expect(!FileManager.default.fileExists(atPath: defaultStore), "the default store was not created")
        // Unset, STORECTL_DB still means the default store.
        expectSuccess(try await storectl("migrate", environment: ["STORECTL_DB": nil]))
        #expect(FileManager.default.fileExists(atPath: defaultStore))
    }

    @Test("a folder where a file belongs is named and called a folder")
    func folders() async throws {
        let storectl = try Storectl()
        let folder = try storectl.directory.makeDirectory("some folder")
        let sync = try await storectl("sync", folder)
        expectFailure(sync, status: 1, mentioning: [folder, "folder"])
        #expect(!sync.stderr.contains("larger than"), "\(sync)")
        let db = try await storectl("--db", folder, "frameworks", "list")
        expectFailure(db, status: 1, mentioning: [folder, "folder"])
        #expect(!db.stderr.contains("SQLite error"), "\(db)")
        let put = try await storectl("images", "put", "https://example.com/a.png", "/")
        expectFailure(put, status: 1, mentioning: ["'/'", "folder"])
        #expect(!put.stderr.contains("NSCocoaErrorDomain"), "\(put)")
    }

    @Test("empty or too long ids, and a feed URL of another scheme, are usage errors (64) naming the argument")
    func badArgumentsExit64() async throws {
        let storectl = try Storectl()
        let long = String(repeating: "x", count: 201)
        for id in ["", long] {
            expectFailure(
                try await storectl(
                    "frameworks", "add", "--id", id, "--name", "n", "--image-name", "i", "--url", "u",
                    "--description", "d"), status: exitUsage, mentioning: ["--id"])
            expectFailure(
                try await storectl("orders", "add", "--id", id, "--item", "Milk:1:1"), status: exitUsage, mentioning: ["--id"])
            expectFailure(
                try await storectl("events", "add", "--id", id, "--title", "t", "--date", "2026-06-08"), status: exitUsage,
                mentioning: ["--id"])
        }
        expectFailure(try await storectl("sync", "ftp://x"), status: exitUsage, mentioning: ["ftp://x"])
        // 200 characters is still fine.
        expectSuccess(try await storectl("orders", "add", "--id", String(repeating: "x", count: 200), "--item", "Milk:1:1"))
    }

    @Test("a negative number after a numeric option is refused as negative, not as a missing value")
    func negativeNumbers() async throws {
        let storectl = try Storectl()
        let folder = storectl.directory.path + "/public"
        // ArgumentParser's default took "-1" for an option and said "Missing value for
        // '--grace-seconds'"; getopt, and these options now, take the next argument as the value.
        let cases: [(arguments: [String], says: String)] = [
            (["publish", folder, "--grace-seconds", "-1"], "must not be negative"),
            (["publish", folder, "--page-size", "-5"], "--page-size"),
            (["export", "--out", folder, "--page-size", "-5"], "must be at least 1"),
            (["export", "--out", folder, "--page-size", "5", "--page-bytes", "-1"], "--page-bytes"),
            (["export", "--out", folder, "--page-size", "5", "--page-bytes", "0"], "--page-bytes: must be at least 1 byte"),
            (["export", "--out", folder, "--page-bytes", "1KiB"], "--page-bytes needs --page-size"),
            (["publish", folder, "--page-bytes", "0"], "--page-bytes: must be at least 1 byte"),
            (["publish", folder, "--page-bytes", "-1"], "--page-bytes"),
            (["history", "--limit", "-3"], "must be at least 1"),
            (["sync", folder, "--timeout", "-3"], "must be at least 1 second"),
            (["sync", folder, "--max-bytes", "-3"], "'-3'"),
            (["images", "prune", "--budget", "-1"], "'-1'"),
            (["--busy-timeout", "-1", "frameworks", "list"], "--busy-timeout"),
            (["frameworks", "list", "--busy-timeout", "-1"], "--busy-timeout"),
        ]
        for (arguments, says) in cases {
            let result = try await storectl.run(arguments)
            expectFailure(result, status: exitUsage, mentioning: [says])
            #expect(!result.stderr.contains("Missing value"), "\(arguments): \(result)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder), "nothing was published or exported")
    }

    @Test("a --timeout beyond a week is a usage error, not a crash")
    func hugeTimeout() async throws {
        // 10^18 s overflowed ten times itself: status 132, and the new store's file left behind.
        let storectl = try Storectl()
        for timeout in ["1000000000000000000", "604801"] {
            expectFailure(
                try await storectl("--db", "new.sqlite", "sync", "http://127.0.0.1:9/feed.json", "--timeout", timeout),
                status: exitUsage, mentioning: ["--timeout"])
        }
        #expect(!FileManager.default.fileExists(atPath: storectl.directory.file("new.sqlite")))
        // SQLite reads LIMIT -1 as no limit.
        expectSuccess(try await storectl("migrate"))
        for limit in ["0", "-1"] {
            expectFailure(try await storectl("history", "--limit=\(limit)"), status: exitUsage, mentioning: ["--limit"])
        }
    }

    @Test("sync '' is a usage error; a quoted '~/feed.json' is a path like any other, never the password database's home")
    func feedPathsTakenAsWritten() async throws {
        let storectl = try Storectl()
        // It named the working folder, failed, and left a history entry saying so.
        expectFailure(try await storectl("sync", ""), status: exitUsage, mentioning: ["<source>"])
        #expect(!FileManager.default.fileExists(atPath: storectl.db))
        // Foundation expanded it from the password database (root's home, whatever $HOME said);
        // --db, --out and STORECTL_DB take it as written, and now so does sync.
        try storectl.directory.makeDirectory("~")
        try FileManager.default.copyItem(
            atPath: DiskFailureTests.examplesFeed.path, toPath: storectl.directory.file("~/feed.json"))
        let synced = try await storectl("sync", "~/feed.json", "--json")
        expectSuccess(synced)
        #expect(synced.stdout.contains(storectl.directory.file("~/feed.json")), "\(synced)")
    }

    /// A quantity that is no integer made the item read as a name with a colon, a price and a
    /// bad aisle: "aisle '1.0' is not an integer".
    @Test("--item NAME:PRICE:AISLE:QTY with a bad quantity names the quantity; any written zero is a price of 0")
    func itemFieldsAreBlamedRightly() async throws {
        let storectl = try Storectl()
        for quantity in ["1.0", "+5", "1e6", "x"] {
            expectFailure(
                try await storectl("orders", "add", "--id", "o", "--item", "Milk:2.49:3:\(quantity)"), status: exitUsage,
                mentioning: ["quantity '\(quantity)' is not an integer of at least 1"])
        }
        expectFailure(
            try await storectl("orders", "add", "--id", "o", "--item", "Milk:2.49:x"), status: exitUsage,
            mentioning: ["aisle 'x' is not an integer of at least 0"])
        expectSuccess(try await storectl("orders", "add", "--id", "o", "--item", "Free:0e1000:1", "--item", "Gift:-0.0e0:2"))
        #expect(try await storectl("orders", "total", "o").stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0.00")
    }

    /// Double(_:) and Int(_:) took "+5", "1e2" and the hexadecimal "0x1p3" as numbers.
    @Test("--busy-timeout takes plain decimals and --budget plain digits (with a unit); signs, exponents, hex are usage errors")
    func numbersArePlain() async throws {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", "f", "--name", "F", "--image-name", "f", "--url", "u", "--description", "d"))
        for value in ["5", "0.5", ".5", "86400"] {
            expectSuccess(try await storectl("--busy-timeout=\(value)", "frameworks", "list"))
        }
        for value in ["+5", "1e2", "0x1p3", "5.", "86400.5"] {
            expectFailure(
                try await storectl("--busy-timeout=\(value)", "frameworks", "list"), status: exitUsage,
                mentioning: ["--busy-timeout"])
        }
        for value in ["1024", "1KiB", "0"] { expectSuccess(try await storectl("images", "stats", "--budget=\(value)")) }
        for value in ["+5", "+1KiB", "1e3", "0x10"] {
            expectFailure(try await storectl("images", "stats", "--budget=\(value)"), status: exitUsage, mentioning: ["--budget"])
        }
    }
}
