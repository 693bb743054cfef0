import Foundation
import Testing

/// A full disk, on a small tmpfs mounted for the test in a mount namespace of its own (root
/// with CAP_SYS_ADMIN only: skipped elsewhere; see `DiskFailureTests`).
@Suite("storectl on a full disk")
struct FullDiskTests {
    static var canMount: Bool { DiskFailureTests.tmpfsAvailable }

    /// Runs `script` under /bin/sh in a mount namespace of its own (`unshare --mount`, as
    /// `DiskFailureTests` does), so its tmpfs vanishes with it whatever happens to the test;
    /// `$0` is storectl, `$1`... are `arguments`.
    static func runInMountNamespace(_ storectl: Storectl, _ script: String, _ arguments: [String] = []) async throws
        -> StorectlResult
    {
        let unshare = try #require(DiskFailureTests.unshare)
        return try await storectl.run(
            ["-c", "exec \"$0\" --mount /bin/sh -c \"$@\"", unshare, script, try Storectl.executableURL().path] + arguments,
            shell: true, timeout: 300)
    }

    @Test(
        "a sync that commits but whose checkpoint at close has no room: exit 0, a warning naming the -wal; the next command, with room, folds it in",
        .enabled(if: canMount, "needs root and tmpfs"))
    func checkpointWithoutRoom() async throws {
        let storectl = try Storectl()
        let feed = try storectl.directory.write(frameworksFeed(count: 100, descriptionBytes: 3000), to: "big.json")
        // The -wal of those 100 records (about 330 KB) and the -shm fit in 600 KB; the main file
        // cannot grow by another 300 KB beside them.
        let script = """
            set -u
            mkdir m && mount -t tmpfs -o size=2m tmpfs m || exit 90
            "$0" --db m/s.sqlite migrate > /dev/null || exit 91
            available=$(df -k m | tail -1 | awk '{print $4}')
            dd if=/dev/zero of=m/fill bs=1k count=$((available - 600)) status=none || exit 92
            "$0" --db m/s.sqlite sync "$1" > sync.out 2> sync.err
            echo "sync $?"
            ls m > after-sync.txt
            rm m/fill
            "$0" --db m/s.sqlite frameworks list --json > list.out 2> list.err
            echo "list $?"
            ls m > after-list.txt
            """
        let result = try await Self.runInMountNamespace(storectl, script, [feed])
        #expect(result.stdout == "sync 0\nlist 0\n", "\(result)")
        let syncErr = try String(contentsOfFile: storectl.directory.file("sync.err"), encoding: .utf8)
        #expect(syncErr.contains("checkpoint before closing failed") && syncErr.contains("m/s.sqlite-wal"), "\(syncErr)")
        let afterSync = try String(contentsOfFile: storectl.directory.file("after-sync.txt"), encoding: .utf8)
        #expect(afterSync.contains("s.sqlite-wal"), "\(afterSync)")
        let list = try JSON.array(try String(contentsOfFile: storectl.directory.file("list.out"), encoding: .utf8))
        #expect(list.count == 100)
        let listErr = try String(contentsOfFile: storectl.directory.file("list.err"), encoding: .utf8)
        #expect(listErr.isEmpty, "\(listErr)")
        let afterList = try String(contentsOfFile: storectl.directory.file("after-list.txt"), encoding: .utf8)
        #expect(afterList == "s.sqlite\n", "\(afterList)")
    }

    /// It used to fail (exit 1) saying so; it now also reads the store, without a -shm (see
    /// `DiskFailureTests.fullDiskWithoutSharedMemoryIsRead`).
    @Test(
        "with no room for the -shm, a command says \"No space left on device\", not only \"disk I/O error\", and reads the store without it",
        .enabled(if: canMount, "needs root and tmpfs"))
    func noRoomSaysSo() async throws {
        let storectl = try Storectl()
        let script = """
            set -u
            mkdir m && mount -t tmpfs -o size=600k tmpfs m || exit 90
            "$0" --db m/s.sqlite migrate > /dev/null || exit 91
            dd if=/dev/zero of=m/fill bs=1k count=2000 status=none 2> /dev/null
            "$0" --db m/s.sqlite frameworks list
            """
        let result = try await Self.runInMountNamespace(storectl, script)
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.contains("m/s.sqlite") && result.stderr.contains("No space left on device"), "\(result)")
        #expect(result.stderr.contains("exclusive locking mode"), "\(result)")
    }

    @Test(
        "a download or stdin copy into a full TMPDIR: exit 1, says it cannot write there, not retried as a connection failure",
        .enabled(if: canMount, "needs root and tmpfs"))
    func fullSpool() async throws {
        let storectl = try Storectl()
        try storectl.directory.write(frameworksFeed(count: 100, descriptionBytes: 3000), to: "big.json")
        try storectl.directory.write(
            Data(
                """
                import http.server, socketserver, sys
                server = socketserver.TCPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
                with open("port.txt.tmp", "w") as f: f.write(str(server.server_address[1]))
                import os; os.rename("port.txt.tmp", "port.txt")
                server.serve_forever()
                """.utf8), to: "server.py")
        let script = """
            set -u
            mkdir m && mount -t tmpfs -o size=64k tmpfs m || exit 90
            python3 server.py 2> /dev/null &
            server=$!
            trap 'kill $server' EXIT
            for i in $(seq 1200); do [ -f port.txt ] && break; sleep 0.1; done
            [ -f port.txt ] || { echo "the server did not start"; exit 93; }
            port=$(cat port.txt)
            TMPDIR="$PWD/m" "$0" --db s.sqlite sync "http://127.0.0.1:$port/big.json" > /dev/null 2> http.err
            echo "http $?"
            TMPDIR="$PWD/m" "$0" --db s.sqlite sync - < big.json > /dev/null 2> stdin.err
            echo "stdin $?"
            """
        let result = try await Self.runInMountNamespace(storectl, script)
        #expect(result.stdout == "http 1\nstdin 1\n", "\(result)")
        let http = try String(contentsOfFile: storectl.directory.file("http.err"), encoding: .utf8)
        #expect(http.contains("cannot write the download to") && http.contains("No space left on device"), "\(http)")
        #expect(!http.contains("cannot connect") && !http.contains("attempts"), "\(http)")
        let stdin = try String(contentsOfFile: storectl.directory.file("stdin.err"), encoding: .utf8)
        #expect(stdin.contains("cannot write the temporary copy") && stdin.contains("No space left on device"), "\(stdin)")
    }
}
