import Foundation
import Testing

/// Another process that holds SQLite's write lock on `database` (a Python sqlite3 connection in
/// `BEGIN IMMEDIATE`) until `release()`.
final class WriteLockHolder: @unchecked Sendable {
    // @unchecked Sendable: `process` and `input` are set once in init and only read after; the
    // Process and Pipe objects are used from one test task at a time.
    private let process = Process()
    private let input = Pipe()

    init(_ database: String) async throws {
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import sqlite3, sys
            connection = sqlite3.connect(sys.argv[1], isolation_level=None)
            connection.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            sys.stdin.read()
            """, database]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        // Wait (without blocking the cooperative pool) for the line that says the lock is held.
        let line = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let received = LockedData()
            output.fileHandleForReading.readabilityHandler = { handle in
                let chunk = handle.availableData
                if let text = received.append(chunk) {
                    handle.readabilityHandler = nil
                    continuation.resume(returning: text)
                }
            }
        }
        guard line.contains("locked") else { throw CocoaError(.fileReadUnknown) }
    }

    /// Ends the other process's transaction (rolled back) and waits for it to exit.
    func release() async {
        try? input.fileHandleForWriting.close()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue(label: "lock-holder-wait").async {
                self.process.waitUntilExit()
                continuation.resume()
            }
        }
    }
}

/// Bytes read so far; the text once a line (or end of file) arrived, else nil.
private final class LockedData: @unchecked Sendable {
    // @unchecked Sendable: every access to `data` holds `lock`.
    private let lock = NSLock()
    private var data = Data()
    private var done = false

    func append(_ chunk: Data) -> String? {
        lock.lock()
        defer { lock.unlock() }
        guard !done else { return nil }
        data.append(chunk)
        guard chunk.isEmpty || data.contains(UInt8(ascii: "\n")) else { return nil }
        done = true
        return String(decoding: data, as: UTF8.self)
    }
}

/// "Errors that mislead": a writer that waits for another process past its busy timeout says so.
@Suite("storectl --busy-timeout")
struct BusyTimeoutTests {
    @Test("a write that waits past --busy-timeout names the store, the lock and the wait; STORECTL_BUSY_TIMEOUT too")
    func waitsThenSaysWhy() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        let holder = try await WriteLockHolder(storectl.db)
        let add = ["frameworks", "add", "--id", "a", "--name", "A", "--image-name", "a", "--url", "https://a", "--description", "d"]
        let timedOut = try await storectl.run(["--busy-timeout", "1"] + add)
        expectFailure(timedOut, status: 1, mentioning: [storectl.db, "another process holds the write lock", "waited 1 s"])
        #expect(!timedOut.stderr.contains("database is locked"), "\(timedOut)")
        let fromEnvironment = try await storectl.run(add, environment: ["STORECTL_BUSY_TIMEOUT": "1"])
        expectFailure(fromEnvironment, status: 1, mentioning: ["another process holds the write lock", "waited 1 s"])
        await holder.release()
        expectSuccess(try await storectl.run(["--busy-timeout", "1"] + add))
        #expect(try await sqlite3(storectl.db, "SELECT id FROM frameworks") == "a")
    }

    @Test("a write waits for another process's write to finish, within the timeout")
    func waitsForTheOtherWriter() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        let holder = try await WriteLockHolder(storectl.db)
        async let added = storectl.run(["--busy-timeout", "120", "events", "add", "--id", "e", "--title", "t", "--date", "2026-06-08"])
        await holder.release()
        expectSuccess(try await added)
    }

    @Test("a malformed --busy-timeout or STORECTL_BUSY_TIMEOUT is a usage error")
    func malformed() async throws {
        let storectl = try Storectl()
        for value in ["abc", "-1", ""] {
            expectFailure(try await storectl("--busy-timeout", value, "frameworks", "list"), status: exitUsage, mentioning: ["--busy-timeout"])
            expectFailure(try await storectl("frameworks", "list", environment: ["STORECTL_BUSY_TIMEOUT": value]), status: exitUsage,
                          mentioning: ["STORECTL_BUSY_TIMEOUT"])
        }
    }
}
