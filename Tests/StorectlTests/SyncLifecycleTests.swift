import Foundation
import Testing

/// `storectl sync` from start to end: interrupted by a signal, fed from stdin, failing with
/// `--json`, and keeping the image budget.
@Suite("storectl sync lifecycle")
struct SyncLifecycleTests {
    /// The store file's bytes, and whether a -wal or -shm was left beside it.
    func snapshot(_ storectl: Storectl) throws -> (Data, Bool) {
        let leftovers = ["-wal", "-shm", "-journal"].contains { FileManager.default.fileExists(atPath: storectl.db + $0) }
        return (try Data(contentsOf: URL(fileURLWithPath: storectl.db)), leftovers)
    }

    /// A store holding one framework, closed.
    func seededStore() async throws -> Storectl {
        let storectl = try Storectl()
        expectSuccess(
            try await storectl(
                "frameworks", "add", "--id", "kept", "--name", "Kept", "--image-name", "k",
                "--url", "https://example.com/k", "--description", "d"))
        return storectl
    }

    // MARK: Signals

    /// `storectl sync FIFO` in the background; the shell's `exec 3> FIFO` returns once storectl
    /// has opened the FIFO to read the feed (the readiness handshake), then half a feed is
    /// written and the signal sent; the FIFO stays open, so only the signal can end the sync.
    func interruptReadingFeed(signal: String) async throws -> (StorectlResult, Storectl, before: Data) {
        let storectl = try await seededStore()
        let (before, _) = try snapshot(storectl)
        let script = """
            mkfifo feed.fifo || exit 90
            \(Storectl.withInterruptEnabled) "$0" sync feed.fifo --json > sync.out 2> sync.err &
            pid=$!
            exec 3> feed.fifo
            printf '{"version": 1, "frameworks": [{"id": "new", "name": "N", ' >&3
            kill -\(signal) $pid
            wait $pid
            echo "exit $?"
            """
        let result = try await storectl.run(["-c", script, try Storectl.executableURL().path], shell: true, timeout: 120)
        return (result, storectl, before)
    }

    @Test("SIGINT while the feed is being read: exit 130, interrupted, the store byte-for-byte unchanged")
    func sigintWhileReading() async throws {
        let (result, storectl, before) = try await interruptReadingFeed(signal: "INT")
        #expect(!result.timedOut, "storectl ignored SIGINT: \(result)")
        #expect(result.output == "exit 130", "\(result)")
        let out = try String(contentsOfFile: storectl.directory.file("sync.out"), encoding: .utf8)
        let err = try String(contentsOfFile: storectl.directory.file("sync.err"), encoding: .utf8)
        #expect(try JSON.object(out)["status"] as? String == "interrupted", "stdout: \(out)")
        #expect(err.contains("interrupted") && err.contains("unchanged"), "stderr: \(err)")
        let (after, leftovers) = try snapshot(storectl)
        #expect(after == before, "the store file changed")
        #expect(!leftovers, "the store was not closed")
    }

    @Test("SIGTERM while the feed is being read: exit 143, interrupted, the store byte-for-byte unchanged")
    func sigtermWhileReading() async throws {
        let (result, storectl, before) = try await interruptReadingFeed(signal: "TERM")
        #expect(!result.timedOut, "\(result)")
        #expect(result.output == "exit 143", "\(result)")
        let out = try String(contentsOfFile: storectl.directory.file("sync.out"), encoding: .utf8)
        #expect((try? JSON.object(out))?["status"] as? String == "interrupted", "stdout: \(out)")
        let (after, leftovers) = try snapshot(storectl)
        #expect(after == before, "the store file changed")
        #expect(!leftovers, "the store was not closed")
    }

    /// A server on 127.0.0.1 that accepts the request and never answers; it tells the shell
    /// (through a FIFO) once the request has arrived, and only then is the signal sent.
    static let stalledServer = """
        import socket, sys, time
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(5)
        with open(sys.argv[1], "w") as port:
            port.write(str(server.getsockname()[1]) + "\\n")
        connection, _ = server.accept()
        connection.recv(65536)
        with open(sys.argv[2], "w") as ready:
            ready.write("requested\\n")
        time.sleep(900)
        """

    /// Answers with headers and part of a body, says so, then stalls: a download under way.
    static let halfAnsweringServer = """
        import socket, sys, time
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(5)
        with open(sys.argv[1], "w") as port:
            port.write(str(server.getsockname()[1]) + "\\n")
        connection, _ = server.accept()
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 1000000\\r\\n\\r\\n")
        connection.sendall(b'{"version": 1, "frameworks": [' + b' ' * 65536)
        time.sleep(1)
        with open(sys.argv[2], "w") as ready:
            ready.write("downloading\\n")
        time.sleep(300)
        """

    /// Answers with headers and streams a body without end (as fast as it is read), and says
    /// so once 32 MiB are sent: a large download under way, whose spool file takes a moment to
    /// delete. Says "ended" instead if the client went away first, or never came within two
    /// minutes, so that the script reading the FIFO never waits for good (the test then fails
    /// on its line, not on its time limit).
    static let streamingServer = """
        import socket, sys
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(5)
        server.settimeout(120)
        with open(sys.argv[1], "w") as port:
            port.write(str(server.getsockname()[1]) + "\\n")
        said = False
        def say(what):
            global said
            if not said:
                said = True
                with open(sys.argv[2], "w") as ready:
                    ready.write(what + "\\n")
        try:
            connection, _ = server.accept()
            connection.settimeout(None)
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 200000000\\r\\n\\r\\n")
            connection.sendall(b'{"version": 1, "frameworks": [')
            sent = 0
            while True:
                connection.sendall(b" " * 65536)
                sent += 65536
                if sent == 32 << 20:
                    say("downloading")
        except OSError:
            pass
        finally:
            say("ended")
        """

    @Test("two Ctrl-Cs during a download: exit 130, and the download's temporary folder is removed")
    func doubleSigintRemovesTheSpool() async throws {
        // A signal that exits without unwinding (the second, or the first past its grace
        // period) left the spool folder of the download (a whole page, possibly) in TMPDIR for
        // good; storectl now removes the live ones before it exits (`SpoolFolder.removeAll`,
        // tested in `SpoolFolderTests`). Here the first signal's cancellation usually wins.
        // The signals wait until the spool folder is there (polled: the server's second before
        // it says "downloading" need not be enough for storectl on a loaded machine).
        let storectl = try await seededStore()
        let (before, _) = try snapshot(storectl)
        let server = storectl.directory.file("server.py")
        try Data(Self.halfAnsweringServer.utf8).write(to: URL(fileURLWithPath: server))
        let temporary = storectl.directory.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let script = """
            mkfifo port.fifo ready.fifo || exit 90
            python3 server.py port.fifo ready.fifo &
            server=$!
            read port < port.fifo
            TMPDIR="$PWD/tmp" \(Storectl.withInterruptEnabled) "$0" sync "http://127.0.0.1:$port/feed.json" --timeout 200 > sync.out 2> sync.err &
            pid=$!
            read ready < ready.fifo
            for i in $(seq 1200); do ls tmp | grep -q store-feed- && break; sleep 0.1; done
            ls tmp > spooled.txt
            kill -INT $pid
            kill -INT $pid
            wait $pid
            echo "exit $?"
            kill $server
            """
        let result = try await storectl.run(["-c", script, try Storectl.executableURL().path], shell: true, timeout: 180)
        #expect(result.output == "exit 130", "\(result)")
        let spooled = try String(contentsOfFile: storectl.directory.file("spooled.txt"), encoding: .utf8)
        #expect(spooled.contains("store-feed-"), "the download was not spooled yet: \(spooled)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [])
        let (after, _) = try snapshot(storectl)
        #expect(after == before, "the store file changed")
    }

    @Test("SIGTERM during a large download, five times over: exit 143, and no spool folder is left in TMPDIR, not even empty")
    func sigtermLeavesNoSpoolFolder() async throws {
        // The spool folder's deinitializer, on another thread, took it off the live list and
        // then deleted it, while storectl, finding the list empty, exited: an empty
        // `store-feed-XXXXXX` was left after most interrupted HTTP syncs (of a large download,
        // whose file takes a moment to delete). Five rounds, each a new download interrupted.
        let storectl = try await seededStore()
        let (before, _) = try snapshot(storectl)
        let server = storectl.directory.file("server.py")
        try Data(Self.streamingServer.utf8).write(to: URL(fileURLWithPath: server))
        let temporary = try storectl.directory.makeDirectory("tmp")
        let script = """
            for round in 1 2 3 4 5; do
                rm -f port.fifo ready.fifo
                mkfifo port.fifo ready.fifo || exit 90
                python3 server.py port.fifo ready.fifo &
                server=$!
                read port < port.fifo
                TMPDIR="$PWD/tmp" "$0" sync "http://127.0.0.1:$port/feed.json" --timeout 200 > sync.out 2> sync.err &
                pid=$!
                read ready < ready.fifo
                spooled=$(ls tmp | tr '\\n' ' ')
                kill -TERM $pid
                wait $pid
                echo "round $round: exit $? spooled [$spooled] left [$(ls -A tmp | tr '\\n' ' ')]"
                kill $server
            done
            """
        let result = try await storectl.run(["-c", script, try Storectl.executableURL().path], shell: true, timeout: 600)
        #expect(!result.timedOut, "\(result)")
        #expect(result.lines.count == 5, "\(result)")
        for line in result.lines {
            #expect(line.contains("exit 143 spooled [store-feed-") && line.hasSuffix("left []"), "\(line)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [])
        let (after, _) = try snapshot(storectl)
        #expect(after == before, "the store file changed")
    }

    /// `sync FIFO --json` (argv[1] is storectl) with its stdout a pipe already full, so that
    /// once interrupted it stays blocked writing its `interrupted` report until the pipe is
    /// read. SIGTERM; once the sync has closed the FIFO (the cancellation has run), SIGTERM
    /// again; the exit is waited for (2 s at most: a storectl that takes the repeat as "exit at
    /// once" ends in milliseconds), then the pipe read. Prints the status, then the report and
    /// the stderr that came after the filler.
    static let repeatedSignalHarness = """
        import fcntl, os, signal, subprocess, sys, threading
        storectl = sys.argv[1]
        os.mkfifo("feed.fifo")
        out_r, out_w = os.pipe()
        fcntl.fcntl(out_w, fcntl.F_SETFL, os.O_NONBLOCK)
        filler = 0
        for size in (4096, 1):
            try:
                while True:
                    filler += os.write(out_w, b"x" * size)
            except BlockingIOError:
                pass
        fcntl.fcntl(out_w, fcntl.F_SETFL, 0)
        sync = subprocess.Popen([storectl, "sync", "feed.fifo", "--json"], stdout=out_w, stderr=subprocess.PIPE)
        os.close(out_w)
        feed = os.open("feed.fifo", os.O_WRONLY)
        os.write(feed, b'{"version": 1, ')
        sync.send_signal(signal.SIGTERM)
        fcntl.fcntl(feed, fcntl.F_SETFL, os.O_NONBLOCK)
        try:
            while True:
                try:
                    os.write(feed, b" ")
                except BlockingIOError:
                    pass
        except BrokenPipeError:
            pass
        sync.send_signal(signal.SIGTERM)
        try:
            sync.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        chunks = []
        reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(out_r, 65536), b"")))
        reader.start()
        errors = sync.stderr.read().decode()
        status = sync.wait()
        reader.join()
        print("exit", status)
        print(b"".join(chunks)[filler:].decode(), end="")
        print(errors, end="")
        """

    @Test("SIGTERM repeated at once (coreutils timeout: to storectl, then to its group) is one request: it winds down, exit 143")
    func repeatedSigtermIsOneRequest() async throws {
        // `timeout` signals its child and then the child's process group: two SIGTERMs a moment
        // apart. Taken as "the user insists", the second made storectl exit at once, with no
        // word and no report. The repeat here comes once the first one's cancellation has run,
        // while the sync is still winding down (blocked writing its report), and within a
        // repeat window the test makes long (`STORECTL_TEST_SIGNAL_REPEAT_WINDOW`), so that a
        // loaded machine cannot push it past the window (and a long grace period, so that the
        // sync, blocked on its stdout, is not ended by it).
        let storectl = try await seededStore()
        let (before, _) = try snapshot(storectl)
        let harness = try storectl.directory.write(Data(Self.repeatedSignalHarness.utf8), to: "harness.py")
        let script = #"STORECTL_TEST_SIGNAL_REPEAT_WINDOW=600 STORECTL_TEST_INTERRUPT_GRACE=600 exec python3 "$1" "$0""#
        let result = try await storectl.run(
            ["-c", script, try Storectl.executableURL().path, harness], shell: true, timeout: 300)
        #expect(!result.timedOut, "\(result)")
        #expect(result.lines.first == "exit 143", "\(result)")
        #expect(result.stdout.contains(#""status": "interrupted""#), "\(result)")
        #expect(result.stdout.contains("interrupted; the store is unchanged"), "\(result)")
        let (after, leftovers) = try snapshot(storectl)
        #expect(after == before, "the store file changed")
        #expect(!leftovers, "the store was not closed")
    }

    @Test("SIGINT on a stalled server: the request is abandoned, exit 130 well before any timeout")
    func sigintOnStalledServer() async throws {
        let storectl = try await seededStore()
        let (before, _) = try snapshot(storectl)
        let server = storectl.directory.file("server.py")
        try Data(Self.stalledServer.utf8).write(to: URL(fileURLWithPath: server))
        let script = """
            mkfifo port.fifo ready.fifo || exit 90
            python3 server.py port.fifo ready.fifo &
            server=$!
            read port < port.fifo
            \(Storectl.withInterruptEnabled) "$0" sync "http://127.0.0.1:$port/feed.json" --timeout 600 > sync.out 2> sync.err &
            pid=$!
            read ready < ready.fifo
            kill -INT $pid
            wait $pid
            echo "exit $?"
            kill $server
            """
        let started = ContinuousClock.now
        let result = try await storectl.run(["-c", script, try Storectl.executableURL().path], shell: true, timeout: 260)
        #expect(!result.timedOut, "\(result)")
        #expect(result.output == "exit 130", "\(result)")
        // The timeout is 600 s and the server stalls 900 s (the run is killed at 260 s): ending
        // well before means the signal ended the request. The bound only leaves a loaded machine
        // minutes to start the processes.
        #expect(ContinuousClock.now - started < .seconds(200))
        let (after, _) = try snapshot(storectl)
        #expect(after == before, "the store file changed")
    }

    // MARK: --json and stdin

    @Test("--json: a failed sync still prints one JSON object on stdout, exit 1, the error on stderr")
    func failedSyncPrintsJSON() async throws {
        let storectl = try await seededStore()
        let feed = try storectl.directory.write(
            Data(#"{"version": 1, "events": [{"id": "e", "title": "t", "date": "2026-02-30"}]}"#.utf8),
            to: "bad.json")
        let result = try await storectl("sync", feed, "--json")
        #expect(result.status == 1, "\(result)")
        let object = try JSON.object(result.stdout)
        #expect(object["status"] as? String == "failed")
        let error = try #require(object["error"] as? String)
        #expect(error.contains("bad.json: events[0].date: '2026-02-30' is not a calendar date"), "\(error)")
        #expect(result.stderr.contains("events[0].date"), "\(result)")

        // Without --json, stdout stays empty.
        let plain = try await storectl("sync", feed)
        expectFailure(plain, status: 1, mentioning: ["events[0].date"])
    }

    @Test("a sync done but whose report cannot be written (stdout on /dev/full): exit 3, says it is done; a dry run's: exit 1")
    func reportThatCannotBeWritten() async throws {
        // It exited 1, "Error: stdout: ...", which says the store is unchanged, while the
        // records were committed.
        let storectl = try await seededStore()
        for (name, id) in [("one.json", "one"), ("two.json", "two")] {
            let feed =
                #"{"version": 1, "frameworks": [{"id": "\#(id)", "name": "N", "imageName": "n", "urlString": "https://example.com/n", "description": "d"}]}"#
            try storectl.directory.write(Data(feed.utf8), to: name)
        }
        let script = """
            "$0" sync one.json --dry-run > /dev/full 2> dry.err; echo "dry-run $?"
            "$0" sync one.json > /dev/full 2> applied.err; echo "applied $?"
            "$0" sync two.json --json > /dev/full 2> json.err; echo "json $?"
            """
        let result = try await storectl.run(["-c", script, try Storectl.executableURL().path], shell: true)
        #expect(result.lines == ["dry-run 1", "applied 3", "json 3"], "\(result)")
        let error = { (name: String) in
            (try? String(contentsOfFile: storectl.directory.file(name), encoding: .utf8)) ?? "(none)"
        }
        #expect(error("dry.err").contains("report could not be written"), "\(error("dry.err"))")
        for name in ["applied.err", "json.err"] {
            #expect(error(name).contains("is applied, but its report could not be written: stdout: "), "\(name): \(error(name))")
            #expect(!error(name).contains("unchanged"), "\(name): \(error(name))")
        }
        #expect(
            try await sqlite3(storectl.db, "SELECT group_concat(id) FROM (SELECT id FROM frameworks ORDER BY id)")
                == "kept,one,two")
    }

    @Test("sync - reads the feed from stdin")
    func syncFromStdin() async throws {
        let storectl = try Storectl()
        let feed =
            #"{"version": 1, "frameworks": [{"id": "piped", "name": "P", "imageName": "p", "urlString": "https://example.com/p", "description": "d"}]}"#
        let result = try await storectl.run(["sync", "-", "--json"], stdin: Data(feed.utf8))
        expectSuccess(result)
        #expect(try JSON.object(result.stdout)["status"] as? String == "applied", "\(result)")
        let shown = try JSON.object(expectSuccess(try await storectl("frameworks", "show", "piped", "--json")).stdout)
        #expect(shown["name"] as? String == "P")

        // From a pipe too, and a bad feed from stdin is named as such.
        let piped = try await storectl.run(
            ["-c", #"printf '%s' '{"version": 1, "frameworks": []}' | "$0" sync -"#, try Storectl.executableURL().path],
            shell: true)
        expectSuccess(piped)
        let bad = try await storectl.run(["sync", "-"], stdin: Data(#"{"version": 1, "frameworks": [{"id": 1}]}"#.utf8))
        expectFailure(bad, status: 1, mentioning: ["frameworks[0]"])
    }

    @Test("images put URL - and URL /dev/stdin read the bytes from stdin, from a file or a pipe")
    func imagesPutFromStdin() async throws {
        let storectl = try Storectl()
        let bytes = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let url = "https://example.com/stdin.png"
        let put = try await storectl.run(["images", "put", url, "-", "--content-type", "image/png"], stdin: bytes)
        expectSuccess(put)
        #expect(put.output == "cached \(url) (3000 bytes)")
        #expect(expectSuccess(try await storectl("images", "get", url)).stdoutData == bytes)

        let storectlPath = try Storectl.executableURL().path
        for file in ["-", "/dev/stdin"] {
            let piped = try await storectl.run(
                ["-c", #"printf 'piped-bytes' | "$0" images put https://example.com/p.png "$1""#, storectlPath, file], shell: true
            )
            expectSuccess(piped)
            #expect(
                expectSuccess(try await storectl("images", "get", "https://example.com/p.png")).stdout == "piped-bytes", "\(file)"
            )
        }
    }

    // MARK: Image budget

    func imageFeed(_ storectl: Storectl, sizes: [Int]) throws -> String {
        let images = sizes.enumerated().map { index, size in
            #"{"url": "https://example.com/i\#(index).png", "contentType": "image/png", "data": "\#(Data(repeating: UInt8(index), count: size).base64EncodedString())"}"#
        }
        return try storectl.directory.write(
            Data(#"{"version": 1, "images": [\#(images.joined(separator: ", "))]}"#.utf8), to: "images.json")
    }

    @Test(
        "sync keeps STORECTL_IMAGE_BUDGET: the cache ends within it; an image larger than the whole budget is not stored and is reported"
    )
    func syncKeepsTheBudget() async throws {
        let storectl = try Storectl()
        let feed = try imageFeed(storectl, sizes: [1000, 1200, 6249])
        let result = try await storectl.run(["sync", feed, "--json"], environment: ["STORECTL_IMAGE_BUDGET": "3000"])
        #expect(result.status == 3, "\(result)")
        #expect(result.stderr.contains("https://example.com/i2.png") && result.stderr.contains("budget"), "\(result)")
        let stats = try JSON.object(expectSuccess(try await storectl("images", "stats", "--json")).stdout)
        let total = try #require(JSON.integer(stats["totalBytes"]))
        #expect(total <= 3000 && total == 2200, "\(stats)")
        let list = try JSON.array(expectSuccess(try await storectl("images", "list", "--json")).stdout)
        #expect(list.compactMap { $0["url"] as? String } == ["https://example.com/i0.png", "https://example.com/i1.png"])
    }

    @Test("sync --budget: like the image commands; the cache is evicted down to it")
    func syncTakesBudget() async throws {
        let storectl = try Storectl()
        for index in 0..<3 {
            let file = try storectl.directory.write(Data(repeating: 1, count: 1000), to: "f\(index).png")
            expectSuccess(try await storectl("images", "put", "https://example.com/old\(index).png", file))
        }
        let feed = try imageFeed(storectl, sizes: [500])
        let result = try await storectl("sync", feed, "--budget", "2KiB")
        expectSuccess(result)
        let stats = try JSON.object(expectSuccess(try await storectl("images", "stats", "--json")).stdout)
        #expect(try #require(JSON.integer(stats["totalBytes"])) <= 2048, "\(stats)")
        let bad = try await storectl("sync", feed, "--budget", "lots")
        expectFailure(bad, status: 64, mentioning: ["--budget"])
    }
}
