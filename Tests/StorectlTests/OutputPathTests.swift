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

    /// A store with three frameworks and one image, for the tests below.
    private func storeWithImage() async throws -> (Storectl, url: String) {
        let storectl = try Storectl()
        for id in ["a", "b", "c"] {
            expectSuccess(
                try await storectl(
                    "frameworks", "add", "--id", id, "--name", id, "--image-name", id, "--url", "https://\(id)",
                    "--description", "d"))
        }
        let url = "https://example.com/a.png"
        expectSuccess(try await storectl("images", "put", url, try storectl.directory.write(Data([1, 2, 3]), to: "a.png")))
        return (storectl, url)
    }

    @Test("--out takes a one-character name, and - for stdout")
    func shortNamesAndStdout() async throws {
        // Foundation's deletingLastPathComponent trapped on "x": the command crashed (status 132).
        let (storectl, url) = try await storeWithImage()
        let stdout = expectSuccess(try await storectl("export")).stdoutData
        expectSuccess(try await storectl("export", "--out", "x"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: storectl.directory.file("x"))) == stdout)
        #expect(expectSuccess(try await storectl("export", "--out", "-")).stdoutData == stdout)
        expectSuccess(try await storectl("images", "get", url, "--out", "y"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: storectl.directory.file("y"))) == Data([1, 2, 3]))
        #expect(expectSuccess(try await storectl("images", "get", url, "--out", "-")).stdoutData == Data([1, 2, 3]))
        expectFailure(try await storectl("export", "--page-size", "2", "--out", "-"), status: exitUsage, mentioning: ["--out"])
    }

    @Test("--out follows a symbolic link, writes a FIFO in place, and refuses a link to nothing")
    func linksAndSpecialFiles() async throws {
        let (storectl, url) = try await storeWithImage()
        let stdout = expectSuccess(try await storectl("export")).stdoutData
        let directory = storectl.directory
        // A link: the file it names gets the export, the link stays a link.
        try Data("old".utf8).write(to: URL(fileURLWithPath: directory.file("real.json")))
        try FileManager.default.createSymbolicLink(atPath: directory.file("link.json"), withDestinationPath: "real.json")
        expectSuccess(try await storectl("export", "--out", "link.json"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: directory.file("link.json")) == "real.json")
        #expect(try Data(contentsOf: URL(fileURLWithPath: directory.file("real.json"))) == stdout)
        // A FIFO is written, not replaced by a plain file (as /dev/null would have been).
        let fifo = directory.file("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        for arguments in [["export", "--out", fifo], ["images", "get", url, "--out", fifo]] {
            // The read end opened first, without blocking: the output (under the pipe's 64 KiB)
            // waits in the pipe, and a FIFO replaced by a file would read as empty, not hang.
            let reader = open(fifo, O_RDONLY | O_NONBLOCK)
            #expect(reader >= 0)
            defer { close(reader) }
            expectSuccess(try await storectl.run(arguments))
            var read = Data(), buffer = [UInt8](repeating: 0, count: 65536)
            while case let count = Foundation.read(reader, &buffer, buffer.count), count > 0 {
                read.append(contentsOf: buffer[..<count])
            }
            #expect(read == (arguments[0] == "export" ? stdout : Data([1, 2, 3])))
            var info = stat()
            #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "still a FIFO")
        }
        // A plain file under /dev (tmpfs /dev/shm) is still replaced whole, through a rename.
        if FileManager.default.isWritableFile(atPath: "/dev/shm") {
            let shm = "/dev/shm/storectl-out-\(UUID().uuidString).json"
            defer { try? FileManager.default.removeItem(atPath: shm) }
            try Data("old".utf8).write(to: URL(fileURLWithPath: shm))
            var before = stat(), after = stat()
            #expect(stat(shm, &before) == 0)
            expectSuccess(try await storectl("export", "--out", shm))
            #expect(stat(shm, &after) == 0 && after.st_ino != before.st_ino, "renamed into place, not written over")
            #expect(try Data(contentsOf: URL(fileURLWithPath: shm)) == stdout)
        }
        // A link to nothing: refused, and nothing is created where it points.
        try FileManager.default.createSymbolicLink(atPath: directory.file("dangling"), withDestinationPath: "missing")
        expectFailure(try await storectl("export", "--out", "dangling"), status: 1, mentioning: ["dangling", "does not exist"])
        #expect(!FileManager.default.fileExists(atPath: directory.file("missing")))
    }

    @Test("a paged export removes only its own earlier pages; a huge page size is one page; a failure creates no folder")
    func pagedExportKeepsOtherFiles() async throws {
        let (storectl, _) = try await storeWithImage()
        let folder = storectl.directory.file("public")
        try FileManager.default.createDirectory(atPath: folder + "/feed-9.json", withIntermediateDirectories: true)
        for name in ["feed-notes.json", "feed-07.json", "feed-1.json", "feed-7.json"] {
            try Data("mine".utf8).write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        expectSuccess(try await storectl("export", "--page-size", "2", "--out", folder))
        let left = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(left == ["feed-07.json", "feed-1.json", "feed-2.json", "feed-9.json", "feed-notes.json", "feed.json"])
        // Int.max records a page: one page (the page count overflowed: status 132).
        expectSuccess(try await storectl("export", "--page-size", "\(Int.max)", "--out", folder))
        #expect(!FileManager.default.fileExists(atPath: folder + "/feed-2.json"))
        // A store that does not exist: no folder is made.
        expectFailure(
            try await storectl("--db", "none.sqlite", "export", "--page-size", "2", "--out", "a/b"), status: 1,
            mentioning: ["none.sqlite", "does not exist"])
        #expect(!FileManager.default.fileExists(atPath: storectl.directory.file("a")))
    }

    /// A paged export that failed midway left the folder it had created, empty.
    @Test("a paged export failing midway removes the folders it created, and only those")
    func failedPagedExportRemovesItsFolder() async throws {
        let storectl = try Storectl()
        for index in 0..<30 {
            expectSuccess(try await storectl("events", "add", "--id", "e\(index)", "--title", "T", "--date", "2026-06-08"))
        }
        // An order read back with an amount out of bounds fails the export after the events' pages.
        expectSuccess(try await storectl("orders", "add", "--id", "c5", "--item", "Milk:2.49:3:2"))
        _ = try await sqlite3(storectl.db, "UPDATE order_items SET price_cents = 9000000000000000000")
        let created = storectl.directory.file("new")
        expectFailure(
            try await storectl("export", "--page-size", "20", "--out", created + "/pages"), status: 1,
            mentioning: ["c5", "price"])
        #expect(!FileManager.default.fileExists(atPath: created), "the failed export left \(created)")
        // A folder that was there stays, with what it held, and without the export's pages.
        let existing = try storectl.directory.makeDirectory("existing")
        try Data("mine".utf8).write(to: URL(fileURLWithPath: existing + "/notes.txt"))
        expectFailure(try await storectl("export", "--page-size", "20", "--out", existing + "/pages"), status: 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: existing) == ["notes.txt"])
        expectFailure(try await storectl("export", "--page-size", "20", "--out", existing), status: 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: existing) == ["notes.txt"])
    }

    /// The case the review found: a full disk. A 64 KiB tmpfs, mounted in a mount namespace of
    /// the shell's own (it vanishes with it, whatever happens to the test).
    @Test(
        "a paged export into a full disk (a 64 KiB tmpfs) fails naming the page and leaves no folder",
        .enabled(
            if: DiskFailureTests.tmpfsAvailable, "needs root with CAP_SYS_ADMIN to mount a tmpfs in a private mount namespace"))
    func pagedExportIntoFullDisk() async throws {
        let storectl = try Storectl()
        let records = (0..<300).map { index in
            #"{"id": "f\#(index)", "name": "\#(String(repeating: "x", count: 300))", "imageName": "i", "urlString": "https://e.com", "description": "d"}"#
        }
        let feed = try storectl.directory.write(
            Data(#"{"version": 1, "frameworks": [\#(records.joined(separator: ","))]}"#.utf8), to: "feed.json")
        expectSuccess(try await storectl("sync", feed))
        let mountPoint = try storectl.directory.makeDirectory("tmpfs")
        let listing = storectl.directory.file("listing.txt")
        let script = #"""
            # $1 storectl, $2 mount point, $3 the mount point's listing after the export
            mount -t tmpfs -o size=64k tmpfs "$2" || exit 97
            "$1" export --page-size 20 --out "$2/pages"
            status=$?
            ls -A "$2" > "$3"
            exit $status
            """#
        let unshare = try #require(DiskFailureTests.unshare)
        let result = try await storectl.run(
            [
                "-c", "exec \"$0\" --mount /bin/sh -c \"$@\"", unshare, script, "full-disk-export",
                try Storectl.executableURL().path, mountPoint, listing,
            ],
            shell: true, timeout: 180)
        #expect(result.status != 97, "could not mount the tmpfs: \(result)")
        expectFailure(result, status: 1, mentioning: [mountPoint + "/pages/feed-", "No space left on device"])
        #expect(try String(contentsOfFile: listing, encoding: .utf8).isEmpty, "the failed export left a folder")
    }

    /// The sweep of an earlier export's later pages deleted a store named like one.
    @Test("a paged export into the folder that holds its store, named feed-2.json, leaves the store")
    func pagedExportNeverRemovesItsStore() async throws {
        let storectl = try Storectl()
        let folder = try storectl.directory.makeDirectory("out")
        let db = folder + "/feed-2.json"
        expectSuccess(try await storectl("--db", db, "events", "add", "--id", "e", "--title", "T", "--date", "2026-06-08"))
        expectSuccess(try await storectl("--db", db, "export", "--page-size", "10", "--out", folder))
        #expect(FileManager.default.fileExists(atPath: db))
        #expect(try await sqlite3(db, "SELECT id FROM events") == "e")
    }

    @Test("images get --out to a path that cannot be written fails with the image's use unrecorded")
    func failedImageGetLeavesTheStore() async throws {
        let (storectl, url) = try await storeWithImage()
        let db = storectl.directory.file("store.sqlite")
        let before = try await sqlite3(db, "SELECT last_access_at FROM images")
        try storectl.directory.makeDirectory("folder")
        for out in ["folder", "missing/y"] {
            expectFailure(try await storectl("images", "get", url, "--out", out), status: 1, mentioning: [out])
        }
        #expect(try await sqlite3(db, "SELECT last_access_at FROM images") == before)
    }
}
