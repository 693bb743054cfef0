import Foundation
import Testing

/// A backup restored over the store (`mv backup store.sqlite`, or `rm` then `cp`) while a
/// storectl command has it open. SQLite's close leaves the old file's -wal and -shm at the path
/// when the database file has moved, and the next command replayed the old store's committed
/// transactions (its own, and other commands' meanwhile) into the restored file: the backup's
/// identity and frameworks, the old store's events, `integrity_check` ok.
@Suite("storectl: a backup restored under an open store", .timeLimit(.minutes(10)))
struct RestoreUnderOpenStoreTests {
    /// A store at `backup` (closed, nothing beside it) holding the framework `b`: its bytes and
    /// identity.
    static func makeBackup(_ cli: Storectl, at backup: String) async throws -> (bytes: Data, identity: String) {
        expectSuccess(
            try await cli.run([
                "--db", backup, "frameworks", "add", "--id", "b", "--name", "B", "--image-name", "b", "--url", "https://b",
                "--description", "d",
            ]))
        #expect(!FileManager.default.fileExists(atPath: backup + "-wal"))
        return (try Data(contentsOf: URL(fileURLWithPath: backup)), try await sqlite3(backup, "SELECT id FROM store_identity"))
    }

    /// The store at `path` is byte for byte `backup`, with no -wal or -shm beside it, and
    /// reads as it.
    static func expectRestored(_ path: String, as backup: (bytes: Data, identity: String)) async throws {
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == backup.bytes)
        #expect(try await sqlite3(path, "SELECT id FROM store_identity") == backup.identity)
        #expect(try await sqlite3(path, "SELECT group_concat(id) FROM frameworks") == "b")
        #expect(try await sqlite3(path, "SELECT count(*) FROM events") == "0")
        #expect(try await sqlite3(path, "PRAGMA integrity_check") == "ok")
    }

    static func addEvent(_ cli: Storectl, _ id: String) async throws {
        expectSuccess(try await cli("events", "add", "--id", id, "--title", "T", "--date", "2026-06-08"))
    }

    @Test(
        "a backup moved over a watched store: watch exits 1 naming it, and leaves no -wal or -shm: the store reads as the backup")
    func backupMovedOverAWatchedStore() async throws {
        let cli = try Storectl()
        try await Self.addEvent(cli, "before")
        let backupPath = cli.directory.file("backup.sqlite")
        let backup = try await Self.makeBackup(cli, at: backupPath)
        let watch = try await cli.start(["watch"])
        #expect(await watch.wait(within: .seconds(240)) { $0.stderr.contains("watching") || $0.exitStatus != nil })
        try await Self.addEvent(cli, "during-watch") // in the -wal: the watch has the store open
        try FileManager.default.copyItem(atPath: backupPath, toPath: cli.db + ".restoring")
        #expect(rename(cli.db + ".restoring", cli.db) == 0)
        let status = await watch.waitForExit(within: .seconds(240))
        await watch.stop()
        #expect(status == 1, "\(watch.stderr)")
        #expect(watch.stderr.contains("the store \(cli.db) was removed or replaced while watched"), "\(watch.stderr)")
        #expect(!watch.stderr.contains("warning"), "\(watch.stderr)")
        try await Self.expectRestored(cli.db, as: backup)
    }

    /// SQLite resolves a symbolic link to the store and names the -wal and -shm after the file
    /// it names; the store looked for them beside the link, found none, and so removed nothing:
    /// the next command replayed the old store's transactions into the backup, without a warning.
    @Test("a backup moved over a store watched through a symbolic link: the close removes the old -wal and -shm beside the file")
    func backupMovedOverAStoreWatchedThroughALink() async throws {
        let cli = try Storectl()
        try await Self.addEvent(cli, "before")
        let backupPath = cli.directory.file("backup.sqlite")
        let backup = try await Self.makeBackup(cli, at: backupPath)
        let link = cli.directory.file("link.sqlite")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: cli.db)
        let watch = try await cli.start(["--db", link, "watch"])
        #expect(await watch.wait(within: .seconds(240)) { $0.stderr.contains("watching") || $0.exitStatus != nil })
        try await Self.addEvent(cli, "during-watch") // in the -wal: the watch has the store open
        try FileManager.default.copyItem(atPath: backupPath, toPath: cli.db + ".restoring")
        #expect(rename(cli.db + ".restoring", cli.db) == 0)
        let status = await watch.waitForExit(within: .seconds(240))
        await watch.stop()
        #expect(status == 1, "\(watch.stderr)")
        #expect(watch.stderr.contains("was removed or replaced while watched"), "\(watch.stderr)")
        #expect(!watch.stderr.contains("warning"), "\(watch.stderr)")
        #expect(!FileManager.default.fileExists(atPath: link + "-wal"))
        try await Self.expectRestored(cli.db, as: backup)
    }

    /// A cron sync waiting on a slow source (here a FIFO the test feeds) while the store is
    /// restored, and another command commits meanwhile.
    @Test(
        "a sync from a slow stdin feed while the store is restored fails at its commit, naming it, and leaves no -wal or -shm",
        arguments: ["mv", "rm-cp"])
    func restoreUnderALongSync(_ how: String) async throws {
        let cli = try Storectl()
        try await Self.addEvent(cli, "before")
        let backupPath = cli.directory.file("backup.sqlite")
        let backup = try await Self.makeBackup(cli, at: backupPath)
        let feed = cli.directory.file("feed.json")
        try frameworksFeed(count: 3, descriptionBytes: 10).write(to: URL(fileURLWithPath: feed))
        let restore = how == "mv" ? #"cp "$2" restoring.sqlite && mv restoring.sqlite "$1""# : #"rm "$1" && cp "$2" "$1""#
        let script = """
            mkfifo feed.fifo
            "$0" --db "$1" sync - --quiet < feed.fifo > sync.out 2>&1 &
            pid=$!
            exec 3> feed.fifo
            # The sync has the store open once its -wal is among its open files (Linux).
            if [ -d /proc/$pid/fd ]; then
                for i in $(seq 600); do ls -l /proc/$pid/fd 2>/dev/null | grep -qF -- "$1-wal" && break; sleep 0.1; done
            else
                sleep 3
            fi
            "$0" --db "$1" events add --id during-sync --title T --date 2026-06-09 > /dev/null || echo "add failed"
            \(restore)
            cat "$3" >&3
            exec 3>&-
            wait $pid
            echo "exit $?"
            cat sync.out
            """
        let result = try await cli.run(
            ["-c", script, try Storectl.executableURL().path, cli.db, backupPath, feed], shell: true, timeout: 120)
        #expect(result.stdout.contains("exit 1"), "\(result)")
        #expect(!result.stdout.contains("add failed"), "\(result)")
        #expect(
            result.stdout.contains(
                "the store \(cli.db) was replaced or removed while this process had it open; nothing was written"), "\(result)")
        #expect(!result.stdout.contains("warning"), "\(result)")
        try await Self.expectRestored(cli.db, as: backup)
    }

    /// Another process has the old store open (a Python sqlite3 connection that read it): the
    /// -wal and -shm are its too, and removing them under it would split it from them. They are
    /// left, and storectl says so on stderr, naming them.
    @Test("another process with the old store open: watch leaves the -wal and -shm and warns, naming them")
    func leftWhileAnotherProcessHasThem() async throws {
        let cli = try Storectl()
        try await Self.addEvent(cli, "before")
        let backupPath = cli.directory.file("backup.sqlite")
        _ = try await Self.makeBackup(cli, at: backupPath)
        let watch = try await cli.start(["watch"])
        #expect(await watch.wait(within: .seconds(240)) { $0.stderr.contains("watching") || $0.exitStatus != nil })
        let holder = try await ScriptProcess.start(
            python: """
                import sqlite3, sys
                connection = sqlite3.connect(sys.argv[1], isolation_level=None)
                connection.execute("SELECT count(*) FROM events").fetchall()
                print("open", flush=True)
                sys.stdin.read()
                """, [cli.db])
        #expect(holder.firstLine == "open")
        try FileManager.default.copyItem(atPath: backupPath, toPath: cli.db + ".restoring")
        #expect(rename(cli.db + ".restoring", cli.db) == 0)
        let status = await watch.waitForExit(within: .seconds(240))
        await watch.stop()
        #expect(status == 1, "\(watch.stderr)")
        #expect(watch.stderr.contains("warning"), "\(watch.stderr)")
        #expect(watch.stderr.contains("\(cli.db)-wal and \(cli.db)-shm"), "\(watch.stderr)")
        #expect(FileManager.default.fileExists(atPath: cli.db + "-wal"))
        #expect(FileManager.default.fileExists(atPath: cli.db + "-shm"))
        _ = await holder.finish()
    }
}
