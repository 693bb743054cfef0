import Foundation
import Testing

/// Issue 12, item 2: `--out` never overwrites the store, and an output file is replaced whole or
/// not at all.
@Suite("storectl --out: never the store, never half a file")
struct OutputPathTests {
    /// The store's files: the main file, byte for byte, and which companions exist.
    func snapshot(_ db: String) throws -> (Data, [Bool]) {
        (
            try Data(contentsOf: URL(fileURLWithPath: db)),
            ["-wal", "-shm", "-journal"].map { FileManager.default.fileExists(atPath: db + $0) }
        )
    }

    @Test("export --out and images get --out refuse the store, its -wal/-shm/-journal, and aliases of it")
    func refusesTheStore() async throws {
        let storectl = try Storectl()
        let db = storectl.directory.file("s.sqlite")
        expectSuccess(
            try await storectl(
                "--db", db, "frameworks", "add", "--id", "a", "--name", "A", "--image-name", "a",
                "--url", "https://a", "--description", "d"))
        let url = "https://example.com/a.png"
        expectSuccess(
            try await storectl("--db", db, "images", "put", url, try storectl.directory.write(Data([1, 2, 3]), to: "a.png")))
        try storectl.directory.makeDirectory("x")
        try FileManager.default.createSymbolicLink(atPath: storectl.directory.file("link.sqlite"), withDestinationPath: db)
        try FileManager.default.linkItem(atPath: db, toPath: storectl.directory.file("hard.sqlite"))
        let before = try snapshot(db)
        let aliases = [
            db, "s.sqlite", "./x/../s.sqlite", storectl.directory.file("x/../s.sqlite"), "link.sqlite", "hard.sqlite",
            "s.sqlite-wal", "s.sqlite-shm", "s.sqlite-journal", "link.sqlite-wal",
        ]
        for out in aliases {
            expectFailure(
                try await storectl("--db", db, "export", "--out", out), status: exitUsage, mentioning: ["--out", out, "store"])
            expectFailure(
                try await storectl("--db", db, "images", "get", url, "--out", out), status: exitUsage,
                mentioning: ["--out", out, "store"])
            expectFailure(
                try await storectl("--db", db, "export", "--page-size", "1", "--out", out), status: exitUsage,
                mentioning: ["--out", out])
        }
        // A store named through a symbolic link is protected too.
        expectFailure(
            try await storectl("--db", "link.sqlite", "export", "--out", db), status: exitUsage, mentioning: ["--out", "store"])
        let after = try snapshot(db)
        #expect(after.0 == before.0, "the store is byte-for-byte unchanged")
        #expect(after.1 == before.1)
        #expect(try await sqlite3(db, "PRAGMA integrity_check") == "ok")
        // Pages in the store's own folder are fine.
        expectSuccess(try await storectl("--db", db, "export", "--page-size", "1", "--out", storectl.directory.path))
    }

    @Test("a failing export leaves the earlier pages intact, and no temporary file behind")
    func failedExportKeepsOldOutput() async throws {
        let storectl = try Storectl()
        for id in ["a", "b", "c"] {
            expectSuccess(
                try await storectl(
                    "frameworks", "add", "--id", id, "--name", id, "--image-name", id,
                    "--url", "https://\(id)", "--description", "old"))
        }
        let folder = storectl.directory.file("public")
        expectSuccess(try await storectl("export", "--page-size", "1", "--out", folder))
        let names = ["feed.json", "feed-2.json", "feed-3.json"]
        let old = try names.map { try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0)) }
        // A new, longer export whose fourth page cannot be written (a folder stands in its place).
        expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", "d", "--name", "d", "--image-name", "d",
                "--url", "https://d", "--description", "new"))
        expectSuccess(try await storectl("frameworks", "update", "a", "--description", "new"))
        try FileManager.default.createDirectory(atPath: folder + "/feed-4.json/inside", withIntermediateDirectories: true)
        let failed = try await storectl("export", "--page-size", "1", "--out", folder)
        expectFailure(failed, status: 1, mentioning: ["feed-4.json"])
        let now = try names.map { try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0)) }
        #expect(now == old, "every earlier page is as it was")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(left == ["feed-2.json", "feed-3.json", "feed-4.json", "feed.json"], "no temporary file left: \(left)")

        // A single file: an export to a folder fails naming it, and leaves the earlier file alone.
        let single = storectl.directory.file("feed.json")
        expectSuccess(try await storectl("export", "--out", single))
        let oldSingle = try Data(contentsOf: URL(fileURLWithPath: single))
        expectFailure(
            try await storectl("export", "--out", storectl.directory.path), mentioning: [storectl.directory.path, "folder"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: single)) == oldSingle)
    }
}
