import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The disk says no: a read-only database file, a folder that cannot be written, a disk that
/// fills up in the middle of a sync. Each time: a clear error on stderr naming the database's
/// path, a non-zero exit, and the store intact afterwards.
///
/// Root ignores permission bits, and these tests often run as root (in containers, in CI). So
/// "cannot be written" is made in whichever of these ways works here, and each that works is
/// tested (see `Denial.available`):
/// - not root: `chmod` (0444 for a file, 0555 for a folder);
/// - root: `chattr +i`, the immutable flag, which binds root too (it needs CAP_LINUX_IMMUTABLE
///   and a file system with the flag, ext4 or xfs; not tmpfs or overlayfs, not Docker's
///   default capabilities);
/// - root: running storectl as `nobody` through util-linux `setpriv`, against files and folders
///   nobody may not write (it needs CAP_SETUID, which root has even in Docker).
/// Only if none works (root without chattr nor setpriv) are the permission tests not run:
/// nothing here could make a file unwritable to them.
@Suite("Disk failures: read-only file, unwritable folder, full disk")
struct DiskFailureTests {
    // MARK: Ways to make a file or folder unwritable

    enum Denial: String, Sendable, CustomTestStringConvertible {
        case chmod
        case immutable
        case nobody

        var testDescription: String {
            switch self {
            case .chmod: "chmod (not root)"
            case .immutable: "chattr +i (root)"
            case .nobody: "storectl run as nobody via setpriv (root)"
            }
        }

        static let nobodyID: UInt32 = 65534

        static let chattr = ["/usr/bin/chattr", "/bin/chattr", "/sbin/chattr", "/usr/sbin/chattr"].first(where: isExecutable)
        static let setpriv = ["/usr/bin/setpriv", "/bin/setpriv"].first(where: isExecutable)

        /// The ways that work on this machine, as this user, in the temporary folder.
        static let available: [Denial] = {
            guard geteuid() == 0 else { return [.chmod] }
            var ways: [Denial] = []
            if let chattr, let probe = try? TemporaryDirectory(prefix: "chattr-probe") {
                let file = probe.file("probe")
                _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
                if runBlocking(chattr, ["+i", file]) == 0 {
                    // The flag really binds root: opening for writing now fails.
                    let descriptor = open(file, O_WRONLY)
                    if descriptor >= 0 { close(descriptor) } else { ways.append(.immutable) }
                    _ = runBlocking(chattr, ["-i", file])
                }
            }
            // nobody must also reach the temporary folder and run the storectl binary (not so if
            // either is under a private folder of root's).
            if let setpriv, let binary = try? Storectl.executableURL().path,
                let probe = try? TemporaryDirectory(prefix: "setpriv-probe"), setMode(probe.path, 0o755) == 0,
                runBlocking(setpriv, nobodyArguments + ["/bin/sh", "-c", "cd \"$0\" && test -x \"$1\"", probe.path, binary]) == 0
            {
                ways.append(.nobody)
            }
            return ways
        }()

        static let nobodyArguments = ["--reuid=\(nobodyID)", "--regid=\(nobodyID)", "--clear-groups"]

        /// Makes `path` (a file or a folder) unwritable this way. For `.nobody` it belongs to
        /// root with no write bit for others, and storectl runs as nobody (`run`).
        func deny(_ path: String) async throws {
            switch self {
            case .chmod:
                try #require(setMode(path, isDirectory(path) ? 0o555 : 0o444) == 0)
            case .immutable:
                try #require(await runTool(try #require(Self.chattr), ["+i", path]) == 0)
            case .nobody:
                try #require(setOwner(path, 0, 0) == 0)
                try #require(setMode(path, isDirectory(path) ? 0o755 : 0o444) == 0)
            }
        }

        /// Runs `body` with `path` denied (`deny`), and allows it again afterwards, whatever
        /// `body` does.
        func whileDenied(_ path: String, _ body: () async throws -> Void) async throws {
            try await deny(path)
            do {
                try await body()
            } catch {
                await allow(path)
                throw error
            }
            await allow(path)
        }

        /// Undoes `deny` (also so that the temporary folder can be removed).
        func allow(_ path: String) async {
            switch self {
            case .chmod: _ = setMode(path, isDirectory(path) ? 0o755 : 0o644)
            case .immutable: _ = await runTool(Self.chattr ?? "chattr", ["-i", path])
            case .nobody: _ = setMode(path, isDirectory(path) ? 0o755 : 0o644)
            }
        }

        /// Before a test denies anything, makes the store's folder and files writable by the user
        /// storectl will run as (nobody, for `.nobody`), so only what `deny` takes away is missing.
        func prepare(_ paths: [String]) {
            guard self == .nobody else { return }
            for path in paths where FileManager.default.fileExists(atPath: path) {
                _ = setOwner(path, Self.nobodyID, Self.nobodyID)
            }
        }

        /// Runs `storectl arguments...` as the user this way denies things to.
        func run(_ storectl: Storectl, _ arguments: [String], timeout: TimeInterval = 60) async throws -> StorectlResult {
            guard self == .nobody else { return try await storectl.run(arguments, timeout: timeout) }
            let binary = try Storectl.executableURL().path
            let setpriv = try #require(Self.setpriv)
            let script = "exec \"$0\" \(Self.nobodyArguments.joined(separator: " ")) \"$@\""
            return try await storectl.run(["-c", script, setpriv, binary] + arguments, shell: true, timeout: timeout)
        }
    }

    // MARK: Read-only database file

    @Test(
        "a read-only database file: writes fail naming the file, reads work, nothing changes",
        .enabled(if: !Denial.available.isEmpty, "no way to make a file read-only for this user here"),
        arguments: Denial.available)
    func readOnlyDatabaseFile(_ denial: Denial) async throws {
        let (storectl, folder, db, before) = try await filledStoreInItsFolder()
        let feed = try storectl.directory.write(
            Data(
                #"{"version":1,"frameworks":[{"id":"new","name":"New","imageName":"new","urlString":"https://example.com/new","description":"New."}]}"#
                    .utf8), to: "small-feed.json")
        _ = setMode(storectl.directory.path, 0o755)
        _ = setMode(feed, 0o644)

        denial.prepare([folder, db, db + "-wal", db + "-shm"])
        try await denial.whileDenied(db) {
            if denial != .nobody {
                // The premise: this process cannot open the file for writing any more.
                let descriptor = open(db, O_WRONLY)
                if descriptor >= 0 { close(descriptor) }
                #expect(descriptor < 0, "\(db) is still writable")
            }
            let writes: [[String]] = [
                [
                    "frameworks", "add", "--id", "new", "--name", "New", "--image-name", "new", "--url",
                    "https://example.com/new", "--description", "New.",
                ],
                ["frameworks", "delete", "app-clip"],
                ["events", "add", "--id", "e-new", "--title", "New", "--date", "2026-06-09"],
                ["sync", feed],
            ]
            for arguments in writes {
                let result = try await denial.run(storectl, ["--db", db] + arguments)
                expectFailure(result, status: 1, mentioning: [db])
                // Said plainly: it was "SQLite error 8: attempt to write a readonly database -
                // while executing `DELETE FROM ...`" (and for a sync, its whole multi-line SQL).
                #expect(result.stderr.contains("it is read-only") && result.stderr.contains("nothing was written"), "\(result)")
                #expect(!result.stderr.contains("SQLite error"), "\(result)")
            }
            // Reading a read-only store still works.
            let list = try await denial.run(storectl, ["--db", db, "frameworks", "list", "--json"])
            expectSuccess(list)
            if list.succeeded { #expect(try JSON.array(list.stdout).count == 16) }
        }

        #expect(sameBytes(try await export(storectl, db: db), before), "the store changed")
        #expect(try await sqlite3(db, "PRAGMA integrity_check") == "ok")
    }

    // MARK: Folder that cannot be written

    @Test(
        "a folder that cannot be written: creating the store there fails naming the file, nothing is created",
        .enabled(if: !Denial.available.isEmpty, "no way to make a folder read-only for this user here"),
        arguments: Denial.available)
    func unwritableFolder(_ denial: Denial) async throws {
        let storectl = try Storectl()
        let folder = try storectl.directory.makeDirectory("locked")
        let db = folder + "/store.sqlite"
        let feed = try storectl.directory.write(try Data(contentsOf: examplesFeed), to: "feed.json")
        _ = setMode(storectl.directory.path, 0o755)
        _ = setMode(feed, 0o644)

        try await denial.whileDenied(folder) {
            for arguments in [
                ["frameworks", "list"], ["migrate"], ["sync", feed],
                ["events", "add", "--id", "e", "--title", "T", "--date", "2026-06-09"],
            ] {
                let result = try await denial.run(storectl, ["--db", db] + arguments)
                expectFailure(result, status: 1, mentioning: [db])
                let stderr = result.stderr.lowercased()
                #expect(
                    stderr.contains("permission denied") || stderr.contains("operation not permitted")
                        || stderr.contains("read-only") || (arguments[0] == "frameworks" && stderr.contains("does not exist")),
                    "\(result)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty, "something was created in \(folder)")
    }

    @Test(
        "a store in a folder that cannot be written, without its -wal and -shm: even a read fails naming the folder, nothing changes",
        .enabled(if: !Denial.available.isEmpty, "no way to make a folder read-only for this user here"),
        arguments: Denial.available)
    func storeInUnwritableFolder(_ denial: Denial) async throws {
        let (storectl, folder, db, before) = try await filledStoreInItsFolder()
        // The premise: the last connection removed both (SQLite could not read the store without
        // creating them again).
        #expect(!FileManager.default.fileExists(atPath: db + "-wal") && !FileManager.default.fileExists(atPath: db + "-shm"))
        _ = setMode(storectl.directory.path, 0o755)

        denial.prepare([folder, db])
        try await denial.whileDenied(folder) {
            for arguments in [["frameworks", "list", "--json"], ["frameworks", "delete", "app-clip"]] {
                let result = try await denial.run(storectl, ["--db", db] + arguments)
                // Named: the store, the folder, and the two files SQLite could not create (it used
                // to be "SQLite error 14: unable to open database file").
                expectFailure(result, status: 1, mentioning: [db, folder, "store.sqlite-wal", "store.sqlite-shm"])
                #expect(result.stderr.contains("is not writable"), "\(result)")
                #expect(result.stdout.isEmpty, "\(result)")
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["store.sqlite"])
        #expect(sameBytes(try await export(storectl, db: db), before), "the store changed")
    }

    /// The store itself is no link, its folder is reached through one (as macOS's /var and
    /// /tmp are): the error names the folder as the path spells it, not the resolved one.
    @Test(
        "a store in an unwritable folder reached through a linked folder: the error names the folder as given",
        .enabled(if: !Denial.available.isEmpty, "no way to make a folder read-only for this user here"),
        arguments: Denial.available)
    func storeInUnwritableFolderThroughALinkedFolder(_ denial: Denial) async throws {
        let (storectl, folder, _, _) = try await filledStoreInItsFolder()
        let alias = storectl.directory.file("alias")
        try #require(symlink(folder, alias) == 0)
        let db = alias + "/store.sqlite"
        _ = setMode(storectl.directory.path, 0o755)
        denial.prepare([folder, folder + "/store.sqlite"])
        try await denial.whileDenied(folder) {
            let result = try await denial.run(storectl, ["--db", db, "frameworks", "list", "--json"])
            expectFailure(result, status: 1, mentioning: ["its folder \(alias) is not writable"])
        }
    }

    /// SQLite puts the -wal and -shm beside the file a symbolic link names, after that file's
    /// name; the check looked beside the link. A link in a writable folder to a store in a
    /// read-only one passed, and SQLite failed with "unable to open database file"; a link in a
    /// read-only folder to a store in a writable one was refused, though SQLite opens it.
    @Test(
        "a store opened through a symbolic link: the folder that must be writable is the store's, not the link's",
        .enabled(if: !Denial.available.isEmpty, "no way to make a folder read-only for this user here"),
        arguments: Denial.available)
    func storeThroughALinkFromAnotherFolder(_ denial: Denial) async throws {
        let (storectl, folder, db, before) = try await filledStoreInItsFolder()
        #expect(!FileManager.default.fileExists(atPath: db + "-wal") && !FileManager.default.fileExists(atPath: db + "-shm"))
        let links = try storectl.directory.makeDirectory("links")
        let link = links + "/link.sqlite"
        try #require(symlink(db, link) == 0)
        let realFolder = URL(fileURLWithPath: folder).resolvingSymlinksInPath().path
        _ = setMode(storectl.directory.path, 0o755)
        let list = ["--db", link, "frameworks", "list", "--json"]

        // The store's folder cannot be written, the link's can: refused, naming the store's folder.
        denial.prepare([folder, db, links])
        try await denial.whileDenied(folder) {
            let result = try await denial.run(storectl, list)
            expectFailure(
                result, status: 1, mentioning: [link, realFolder, "is not writable", "store.sqlite-wal", "store.sqlite-shm"])
            #expect(!result.stderr.contains("SQLite error"), "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["store.sqlite"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: links) == ["link.sqlite"])

        // The link's folder cannot be written, the store's can: it opens.
        denial.prepare([folder, db, links])
        try await denial.whileDenied(links) {
            let result = try await denial.run(storectl, list)
            expectSuccess(result)
            if result.succeeded { #expect(try JSON.array(result.stdout).count == 16) }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: links) == ["link.sqlite"])
        #expect(sameBytes(try await export(storectl, db: db), before), "the store changed")
    }

    @Test("a folder that cannot exist (its parent is a file): --db and the default location both fail naming the path")
    func folderUnderAFile() async throws {
        let storectl = try Storectl()
        let file = try storectl.directory.write(Data("not a folder".utf8), to: "plain-file")
        let db = file + "/store.sqlite"
        for arguments in [["frameworks", "list"], ["sync", examplesFeed.path], ["migrate"]] {
            let result = try await storectl.run(["--db", db] + arguments)
            // It said the system's "Not a directory", which did not say which part.
            expectFailure(result, status: 1, mentioning: [db, "a part of it before the last is a file, not a folder"])
        }
        // A folder that does not exist, and a path ending with '/'.
        let missingFolder = storectl.directory.file("no-such-folder") + "/store.sqlite"
        expectFailure(
            try await storectl.run(["--db", missingFolder, "migrate"]), status: 1,
            mentioning: [missingFolder, "its folder \(storectl.directory.file("no-such-folder")) does not exist"])
        expectFailure(
            try await storectl.run(["--db", storectl.directory.file("new") + "/", "migrate"]), status: 1,
            mentioning: ["the path ends with '/'"])
        // The default location, $XDG_DATA_HOME/storectl/store.sqlite, whose folder storectl
        // creates: it cannot be created under a file.
        let result = try await storectl.run(
            ["frameworks", "list"],
            environment: ["STORECTL_DB": nil, "XDG_DATA_HOME": file + "/data"])
        expectFailure(result, status: 1, mentioning: [file + "/data/storectl"])
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "not a folder")
    }

    // MARK: Full disk

    /// `ulimit -f` counts 512-byte blocks in dash and in bash as /bin/sh (POSIX mode), 1024-byte
    /// ones in bash otherwise: 4096 is 2 or 4 MiB, far less than the sync's write transaction
    /// (`bigFeedCount` records: over 8 MB) and more than the store holds before it.
    static let fileSizeLimitBlocks = 4096
    static let fileSizeLimitBytes = 4096 * 512

    @Test("the disk fills up mid-sync: exit 1 naming the file and the error, the store exactly as before")
    func diskFullMidSync() async throws {
        let storectl = try Storectl()
        try await fillStore(storectl, db: storectl.db)
        let before = try await export(storectl, db: storectl.db)
        let big = try storectl.directory.write(try Self.bigFeed(count: Self.bigFeedCount), to: "big-feed.json")
        for suffix in ["", "-wal", "-shm"] {
            let size = (try? FileManager.default.attributesOfItem(atPath: storectl.db + suffix)[.size] as? Int) ?? 0
            try #require(size < Self.fileSizeLimitBytes / 2, "store\(suffix) is already \(size) bytes")
        }

        // A file size limit (RLIMIT_FSIZE) stands in for a full disk: a write past it fails with
        // EFBIG, which SQLite reports as SQLITE_FULL or SQLITE_IOERR. The shell ignores SIGXFSZ
        // (ignored signals stay ignored across exec), else the kernel would kill storectl with it
        // instead of failing the write.
        let binary = try Storectl.executableURL().path
        let script = "trap '' XFSZ; ulimit -f \(Self.fileSizeLimitBlocks) || exit 99; exec \"$0\" sync \"$1\""
        let result = try await storectl.run(["-c", script, binary, big], shell: true, timeout: 180)
        #expect(result.status != 99, "ulimit -f failed: \(result)")
        #expect(result.status != 128 + SIGXFSZ, "killed by SIGXFSZ: \(result)")
        expectFailure(result, status: 1, mentioning: [storectl.db])
        let stderr = result.stderr.lowercased()
        #expect(stderr.contains("disk i/o error") || stderr.contains("full") || stderr.contains("too large"), "\(result)")

        // Without the limit: intact, unchanged, and usable.
        #expect(try await sqlite3(storectl.db, "PRAGMA integrity_check") == "ok")
        #expect(sameBytes(try await export(storectl, db: storectl.db), before), "the store changed")
        let again = try await storectl.run(["sync", big, "--json"], timeout: 180)
        expectSuccess(again)
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM frameworks") == String(Self.bigFeedCount + 16))
        #expect(try await sqlite3(storectl.db, "PRAGMA integrity_check") == "ok")
    }

    /// Whether a tmpfs can be mounted in a private mount namespace (`unshare --mount`): root with
    /// CAP_SYS_ADMIN, as here; not an unprivileged user, not a default Docker container.
    static let tmpfsAvailable: Bool = {
        guard geteuid() == 0, let unshare = unshare, let probe = try? TemporaryDirectory(prefix: "tmpfs-probe") else {
            return false
        }
        return runBlocking(unshare, ["--mount", "/bin/sh", "-c", "mount -t tmpfs -o size=1m tmpfs \"$0\"", probe.path]) == 0
    }()
    static let unshare = ["/usr/bin/unshare", "/bin/unshare"].first(where: isExecutable)

    /// The real thing, where it can be had: the store on a 4 MiB tmpfs, mounted in a mount
    /// namespace of storectl's own (so it vanishes with it, whatever happens to the test). A write
    /// past the end fails with ENOSPC, which SQLite reports as SQLITE_FULL: the writer's
    /// whole-transaction rollback path. The export and the store's files are taken out of the
    /// tmpfs before it vanishes.
    @Test(
        "the store's disk (a 4 MiB tmpfs) fills up mid-sync: exit 1, 'database or disk is full', the store as before",
        .enabled(if: tmpfsAvailable, "needs root with CAP_SYS_ADMIN to mount a tmpfs in a private mount namespace"))
    func tmpfsFullMidSync() async throws {
        let storectl = try Storectl()
        try await fillStore(storectl, db: storectl.db)
        let before = try await export(storectl, db: storectl.db)
        // Everything into the database file itself, so that copying it alone copies the store.
        _ = try await sqlite3(storectl.db, "PRAGMA wal_checkpoint(TRUNCATE)")
        let big = try storectl.directory.write(try Self.bigFeed(count: Self.bigFeedCount), to: "big-feed.json")
        let mountPoint = try storectl.directory.makeDirectory("tmpfs")
        let out = try storectl.directory.makeDirectory("out")
        let script = try storectl.directory.write(
            Data(
                #"""
                # $1 storectl, $2 mount point, $3 store to copy there, $4 feed, $5 folder for the results
                mount -t tmpfs -o size=4m tmpfs "$2" || exit 97
                cp "$3" "$2/store.sqlite" || exit 98
                "$1" --db "$2/store.sqlite" sync "$4"
                status=$?
                "$1" --db "$2/store.sqlite" export > "$5/export.json" 2> "$5/export.err"
                echo $? > "$5/export.status"
                for file in "$2"/store.sqlite "$2"/store.sqlite-wal; do [ -f "$file" ] && cp "$file" "$5/"; done
                exit $status
                """#.utf8), to: "tmpfs-sync.sh")
        let binary = try Storectl.executableURL().path
        let unshare = try #require(Self.unshare)
        let result = try await storectl.run(
            ["-c", "exec \"$0\" --mount /bin/sh \"$@\"", unshare, script, binary, mountPoint, storectl.db, big, out],
            shell: true, timeout: 180)
        #expect(result.status != 97 && result.status != 98, "could not set up the tmpfs: \(result)")
        expectFailure(result, status: 1, mentioning: [mountPoint + "/store.sqlite", "database or disk is full"])

        // Read on the full disk, right after the failure: the store as before.
        let exportStatus = try String(contentsOfFile: out + "/export.status", encoding: .utf8)
        #expect(
            exportStatus.trimmingCharacters(in: .whitespacesAndNewlines) == "0",
            "export on the full disk failed: \((try? String(contentsOfFile: out + "/export.err", encoding: .utf8)) ?? "")")
        #expect(sameBytes(try String(contentsOfFile: out + "/export.json", encoding: .utf8), before), "the store changed")
        // And its files, taken out of the tmpfs: intact, the same records.
        #expect(try await sqlite3(out + "/store.sqlite", "PRAGMA integrity_check") == "ok")
        #expect(sameBytes(try await export(storectl, db: out + "/store.sqlite"), before), "the store changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint).isEmpty, "the tmpfs outlived its namespace")
    }

    /// A store on a full disk could not be read at all, so not exported to rescue it: opening it
    /// in WAL mode makes its -shm, and the unix VFS writes a byte into each of its pages ("disk
    /// I/O error (No space left on device)", exit 1, for `list` and `export` alike). storectl
    /// now opens it without a -shm, in exclusive locking mode: what it holds is read, the
    /// committed changes only its -wal has included; a write still fails, saying the disk is
    /// full, and changes nothing.
    @Test(
        "a store on a full disk without its -shm is read, its -wal included, and exported; a write fails saying the disk is full",
        .enabled(if: tmpfsAvailable, "needs root with CAP_SYS_ADMIN to mount a tmpfs in a private mount namespace"))
    func fullDiskWithoutSharedMemoryIsRead() async throws {
        let storectl = try Storectl()
        try await fillStore(storectl, db: storectl.db)
        _ = try await sqlite3(storectl.db, "PRAGMA wal_checkpoint(TRUNCATE)")
        let mountPoint = try storectl.directory.makeDirectory("tmpfs")
        let out = try storectl.directory.makeDirectory("out")
        try Data(try await sqlite3(storectl.db, "SELECT max(id) FROM frameworks").utf8).write(
            to: URL(fileURLWithPath: out + "/first-id"))
        let script = try storectl.directory.write(
            Data(
                #"""
                # $1 storectl, $2 mount point, $3 store to copy there, $4 folder for the results
                mount -t tmpfs -o size=4m tmpfs "$2" || exit 97
                cp "$3" "$2/store.sqlite" || exit 98
                # A committed change in the -wal alone, as a process that ended without its
                # checkpoint leaves it; the -shm is rebuilt from the -wal by whoever opens it.
                sqlite3 -cmd ".dbconfig no_ckpt_on_close on" "$2/store.sqlite" "UPDATE frameworks SET name = 'only in the wal' WHERE id = (SELECT min(id) FROM frameworks)" > /dev/null || exit 98
                rm -f "$2/store.sqlite-shm"
                [ -s "$2/store.sqlite-wal" ] || exit 98
                dd if=/dev/zero of="$2/fill" bs=4k 2> /dev/null
                "$1" --db "$2/store.sqlite" export > "$4/export.json" 2> "$4/export.err"
                echo $? > "$4/export.status"
                "$1" --db "$2/store.sqlite" frameworks delete "$(cat "$4/first-id")" 2> "$4/delete.err"
                echo $? > "$4/delete.status"
                "$1" --db "$2/store.sqlite" frameworks add --id new --name N --image-name n --url https://n --description d 2> "$4/add.err"
                echo $? > "$4/add.status"
                timeout 60 "$1" --db "$2/store.sqlite" watch 2> "$4/watch.err"
                echo $? > "$4/watch.status"
                rm "$2/fill"
                "$1" --db "$2/store.sqlite" export > "$4/after.json" 2> "$4/after.err" || exit 99
                """#.utf8), to: "tmpfs-full-read.sh")
        let binary = try Storectl.executableURL().path
        let unshare = try #require(Self.unshare)
        let result = try await storectl.run(
            ["-c", "exec \"$0\" --mount /bin/sh \"$@\"", unshare, script, binary, mountPoint, storectl.db, out],
            shell: true, timeout: 180)
        #expect(result.status == 0, "\(result)")
        func read(_ name: String) throws -> String {
            try String(contentsOfFile: out + "/" + name, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let (exportStatus, exportErr, export) = (try read("export.status"), try read("export.err"), try read("export.json"))
        #expect(exportStatus == "0", "export on the full disk failed: \(exportErr)")
        #expect(
            exportErr.contains("SQLite cannot make the store's -shm") && exportErr.contains("exclusive locking mode"),
            "\(exportErr)")
        #expect(export.contains("only in the wal"))
        // A write of a record already there is tried that way, and fails saying the disk is full.
        let (deleteStatus, deleteErr) = (try read("delete.status"), try read("delete.err"))
        #expect(deleteStatus == "1" && deleteErr.contains("database or disk is full"), "\(deleteStatus) \(deleteErr)")
        // A command that adds, and watch (which would hold the lock while it runs), fail at once.
        for command in ["add", "watch"] {
            let (status, error) = (try read("\(command).status"), try read("\(command).err"))
            #expect(
                status == "1" && error.contains("No space left on device") && !error.contains("exclusive locking mode"),
                "\(command): \(status) \(error)")
        }
        // Once there is room, the store as the full disk showed it: the write changed nothing.
        let (after, afterErr) = (try read("after.json"), try read("after.err"))
        #expect(afterErr.isEmpty, "\(afterErr)")
        #expect(sameBytes(after, export), "the store changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint).isEmpty, "the tmpfs outlived its namespace")
    }

    // MARK: Helpers

    static let examplesFeed = URL(fileURLWithPath: #filePath) // Tests/StorectlTests/DiskFailureTests.swift
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/apple-frameworks.json")
    var examplesFeed: URL { Self.examplesFeed }

    /// The example feed's 16 frameworks, an event and an order.
    /// A store with records, alone in a folder `store` of a new test directory, and its export.
    func filledStoreInItsFolder() async throws -> (Storectl, folder: String, db: String, export: String) {
        let storectl = try Storectl()
        let folder = try storectl.directory.makeDirectory("store")
        let db = folder + "/store.sqlite"
        try await fillStore(storectl, db: db)
        return (storectl, folder, db, try await export(storectl, db: db))
    }

    func fillStore(_ storectl: Storectl, db: String) async throws {
        expectSuccess(try await storectl.run(["--db", db, "sync", examplesFeed.path, "--quiet"], timeout: 60))
        expectSuccess(
            try await storectl.run(["--db", db, "events", "add", "--id", "e-1", "--title", "Keynote", "--date", "2026-06-08"]))
        expectSuccess(try await storectl.run(["--db", db, "orders", "add", "--id", "o-1", "--item", "Milk:2.49:3:2"]))
    }

    /// The whole store as one feed (storectl export), run as the test's own user.
    func export(_ storectl: Storectl, db: String) async throws -> String {
        let result = try await storectl.run(["--db", db, "export"], timeout: 60)
        expectSuccess(result)
        #expect(result.stdout.contains("app-clip"))
        return result.stdout
    }

    /// Enough records (about 600 bytes each) to need over twice the room the limits leave, and
    /// not many more: parsing and writing them takes seconds of CPU in a debug build.
    static let bigFeedCount = 12_000

    /// `count` frameworks of about 600 bytes each.
    static func bigFeed(count: Int) throws -> Data {
        let frameworks: [[String: Any]] = (0..<count).map { index in
            [
                "id": "big-\(index)", "name": "Big framework \(index)", "imageName": "big-\(index)",
                "urlString": "https://example.com/big/\(index)",
                "description": String(repeating: "Lots of text about framework \(index). ", count: 14),
            ]
        }
        return try JSONSerialization.data(withJSONObject: ["version": 1, "frameworks": frameworks], options: [.sortedKeys])
    }
}

private func setMode(_ path: String, _ mode: mode_t) -> Int32 { chmod(path, mode) }

private func setOwner(_ path: String, _ user: UInt32, _ group: UInt32) -> Int32 { chown(path, uid_t(user), gid_t(group)) }

private func isExecutable(_ path: String) -> Bool { FileManager.default.isExecutableFile(atPath: path) }

private func isDirectory(_ path: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
}

/// Runs a tool, its output discarded; its exit status (-1 if it could not start).
private func runTool(_ path: String, _ arguments: [String]) async -> Int32 {
    (try? await ProcessRunner.run(path, arguments).status) ?? -1
}

/// `runTool`, blocking: only for the one-time probe of what works here, which test traits
/// evaluate synchronously.
private func runBlocking(_ path: String, _ arguments: [String]) -> Int32 {
    ProcessRunner.runBlocking(path, arguments)
}
