import Foundation
import StoreTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C reaches a command that waits on a pipe or a FIFO: it exits 128 + the signal at the
/// first signal, leaving nothing behind. The first signal used to be ignored there: a blocking
/// `read` or `open` never saw the task's cancellation, and only a second signal ended it.
@Suite("storectl interrupted while it waits on a pipe or a FIFO", .timeLimit(.minutes(10)))
struct BlockedCommandInterruptTests {
    /// Waits until `process` catches SIGINT and SIGTERM (its dispatch signal sources install
    /// handlers for both, together), so that a signal sent now is the command's to handle, not
    /// the default that kills it. Linux's /proc; elsewhere a second's wait.
    func waitUntilSignalsAreCaught(_ process: BackgroundProcess) async throws {
        #if os(Linux)
            let caught = await eventually(within: 60) {
                let status = (try? String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8)) ?? ""
                guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigCgt:") }),
                    let mask = UInt64(line.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16)
                else { return process.exitStatus != nil }
                return mask & (1 << (SIGINT - 1)) != 0 && mask & (1 << (SIGTERM - 1)) != 0
            }
            #expect(caught)
        #else
            try await Task.sleep(for: .seconds(1))
        #endif
        try #require(process.exitStatus == nil, "it ended before it could be interrupted: \(process.stderr)")
        // Into its wait: the signal would do as well before it (the command's task is then
        // cancelled before it waits), but this is the case that hung.
        try await Task.sleep(for: .milliseconds(300))
    }

    /// The watchdog that ends a command 5 s after the first signal, put beyond the tests' wait:
    /// the commands these tests interrupt must end by their own cancellation.
    static let noGrace: [String: String?] = ["STORECTL_TEST_INTERRUPT_GRACE": "3600"]

    func interrupt(_ process: BackgroundProcess, with signal: Int32) async throws -> Int32? {
        try await waitUntilSignalsAreCaught(process)
        process.send(signal)
        // A bound that only stops a hang: the first signal used to be ignored for good (and the
        // watchdog is out of reach: `noGrace`).
        let status = await process.waitForExit(within: .seconds(240))
        if status == nil { process.send(SIGKILL) }
        return status
    }

    @Test("images put - with a stdin that sends nothing: exit 130, no store created")
    func imagePutFromAStalledPipe() async throws {
        let storectl = try Storectl()
        let put = try await storectl.start(["images", "put", "https://example.com/a.png", "-"], environment: Self.noGrace)
        #expect(try await interrupt(put, with: SIGINT) == 128 + SIGINT, "\(put.stderr)")
        #expect(!FileManager.default.fileExists(atPath: storectl.db))
    }

    @Test("images put from a FIFO nobody writes: exit 143 on SIGTERM")
    func imagePutFromAFIFOWithoutWriter() async throws {
        let storectl = try Storectl()
        let fifo = storectl.directory.file("in.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let put = try await storectl.start(["images", "put", "https://example.com/a.png", fifo], environment: Self.noGrace)
        #expect(try await interrupt(put, with: SIGTERM) == 128 + SIGTERM, "\(put.stderr)")
        #expect(!FileManager.default.fileExists(atPath: storectl.db))
    }

    @Test("sync from a FIFO nobody writes: exit 130, 'interrupted', the store unchanged")
    func syncFromAFIFOWithoutWriter() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        let fifo = storectl.directory.file("feed.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let sync = try await storectl.start(["sync", fifo], environment: Self.noGrace)
        #expect(try await interrupt(sync, with: SIGINT) == 128 + SIGINT, "\(sync.stderr)")
        #expect(sync.stderr.contains("interrupted"), "\(sync.stderr)")
        #expect(try await storectl("frameworks", "list", "--json").output == "[]")
    }

    @Test("export --out a FIFO nobody reads: exit 130")
    func exportToAFIFOWithoutReader() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        let fifo = storectl.directory.file("out.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let export = try await storectl.start(["export", "--out", fifo], environment: Self.noGrace)
        #expect(try await interrupt(export, with: SIGINT) == 128 + SIGINT, "\(export.stderr)")
    }

    /// No cancellation reaches a `write` blocked on a full pipe: the first signal ends the
    /// command once its grace has passed.
    @Test("export --out a FIFO whose reader never reads (the write blocks on a full pipe): exit 130")
    func exportToAFIFOThatNeverDrains() async throws {
        let storectl = try Storectl()
        // Far more than a pipe holds (64 KiB on Linux).
        let image = try storectl.directory.write(Data(repeating: 7, count: 1 << 20), to: "large.bin")
        expectSuccess(try await storectl("images", "put", "https://example.com/large.bin", image))
        let fifo = storectl.directory.file("out.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)
        try #require(reader >= 0)
        defer { close(reader) }
        let export = try await storectl.start(["export", "--out", fifo])
        #expect(try await interrupt(export, with: SIGINT) == 128 + SIGINT, "\(export.stderr)")
    }
}
