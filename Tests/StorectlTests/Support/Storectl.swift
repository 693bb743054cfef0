import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one run of the `storectl` binary produced.
struct StorectlResult: Sendable, CustomStringConvertible {
    var arguments: [String]
    /// The exit status; 128 + the signal number if it was killed by a signal.
    var status: Int32
    var stdoutData: Data
    var stderrData: Data
    /// True if it ran past its time limit and was killed.
    var timedOut: Bool

    var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    var stderr: String { String(decoding: stderrData, as: UTF8.self) }
    /// stdout without its final newline(s).
    var output: String {
        var text = stdout
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }
    /// stdout's lines (without the trailing empty one).
    var lines: [String] { output.isEmpty ? [] : output.components(separatedBy: "\n") }
    var succeeded: Bool { status == 0 && !timedOut }

    var description: String {
        "storectl \(arguments.joined(separator: " ")) -> exit \(status)\(timedOut ? " (timed out)" : "")\n"
            + "--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)"
    }
}

enum StorectlError: Error, CustomStringConvertible {
    case executableNotFound(searched: [String])
    case unsafeEnvironment(String)

    var description: String {
        switch self {
        case .executableNotFound(let searched):
            "cannot find the storectl executable: set STORECTL_BIN, or build it next to the test bundle "
                + "(searched upwards from \(searched.joined(separator: ", ")))"
        case .unsafeEnvironment(let reason):
            "refusing to run storectl: \(reason)"
        }
    }
}

/// Runs the built `storectl` binary the way a user would, inside a private temporary directory.
///
/// Every run gets `HOME` and `XDG_DATA_HOME` inside that directory and `STORECTL_DB` pointing at
/// `db` (unless a test overrides them, and then only to other paths inside it), so the user's
/// real store is never touched. stdout and stderr go to files, so big outputs cannot deadlock.
struct Storectl: Sendable {
    /// The temporary directory all of this instance's files live in (removed when released).
    let directory: TemporaryDirectory
    /// `$HOME` for every run.
    let home: String
    /// `$XDG_DATA_HOME` for every run.
    let dataHome: String
    /// The store file `STORECTL_DB` names by default.
    let db: String

    static let defaultTimeout: TimeInterval = 20

    init() throws {
        directory = try TemporaryDirectory()
        home = try directory.makeDirectory("home")
        dataHome = try directory.makeDirectory("xdg-data")
        db = directory.file("store.sqlite")
        try directory.makeDirectory(".io")
    }

    // MARK: Locating the binary

    /// The `storectl` executable: `$STORECTL_BIN`, else the nearest `storectl` found walking up
    /// from the test bundle (`.build/debug/StorePackageTests.xctest` -> `.build/debug/storectl`).
    static let executable: Result<URL, StorectlError> = locateExecutable()

    static func executableURL() throws -> URL { try executable.get() }

    private static func locateExecutable() -> Result<URL, StorectlError> {
        let fileManager = FileManager.default
        if let path = ProcessInfo.processInfo.environment["STORECTL_BIN"], !path.isEmpty {
            guard isExecutableFile(path) else { return .failure(.executableNotFound(searched: ["STORECTL_BIN=\(path)"])) }
            return .success(URL(fileURLWithPath: path))
        }
        let cwd = URL(fileURLWithPath: fileManager.currentDirectoryPath, isDirectory: true)
        var starts = [Bundle.main.bundleURL]
        if let first = CommandLine.arguments.first {
            starts.append(URL(fileURLWithPath: first, relativeTo: cwd))
        }
        starts += Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }
        for start in starts {
            var directory = start.absoluteURL.standardizedFileURL
            while true {
                let candidate = directory.appendingPathComponent("storectl")
                if isExecutableFile(candidate.path) { return .success(candidate) }
                let parent = directory.deletingLastPathComponent().standardizedFileURL
                if parent.path == directory.path || directory.path == "/" { break }
                directory = parent
            }
        }
        return .failure(.executableNotFound(searched: starts.map(\.path)))
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isExecutableFile(atPath: path)
    }

    // MARK: Running

    /// The environment of a run: the test's own, minus anything storectl reads, plus the private
    /// HOME, XDG_DATA_HOME and STORECTL_DB; then `overrides` (nil removes a variable).
    func environment(_ overrides: [String: String?] = [:]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("STORECTL_") || key.hasPrefix("XDG_") { environment[key] = nil }
        environment["HOME"] = home
        environment["XDG_DATA_HOME"] = dataHome
        environment["STORECTL_DB"] = db
        for (key, value) in overrides { environment[key] = value }
        return environment
    }

    /// Runs `storectl arguments...`.
    /// - Parameters:
    ///   - environment: changes to the default environment; a nil value removes the variable.
    ///   - stdin: bytes for standard input (default: /dev/null).
    ///   - umask: runs it under this umask (through /bin/sh).
    ///   - shell: runs `/bin/sh arguments...` instead, e.g. `["-c", script, storectlPath]`, with
    ///     the same environment (for loops of storectl runs).
    ///   - timeout: killed (SIGKILL) after this many seconds.
    @discardableResult
    func run(
        _ arguments: [String],
        environment overrides: [String: String?] = [:],
        stdin: Data? = nil,
        umask: String? = nil,
        shell: Bool = false,
        timeout: TimeInterval = Storectl.defaultTimeout
    ) async throws -> StorectlResult {
        let environment = environment(overrides)
        try checkIsolated(arguments, environment)
        let executable = try Self.executableURL()

        let io = directory.file(".io/\(UUID().uuidString)")
        let fileManager = FileManager.default
        for suffix in [".out", ".err"] { fileManager.createFile(atPath: io + suffix, contents: nil) }
        let stdoutHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: io + ".out"))
        let stderrHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: io + ".err"))
        let stdinHandle: FileHandle
        if let stdin {
            fileManager.createFile(atPath: io + ".in", contents: stdin)
            stdinHandle = try FileHandle(forReadingFrom: URL(fileURLWithPath: io + ".in"))
        } else {
            stdinHandle = FileHandle.nullDevice
        }
        defer {
            try? stdoutHandle.close()
            try? stderrHandle.close()
            if stdin != nil { try? stdinHandle.close() }
            for suffix in [".out", ".err", ".in"] { try? fileManager.removeItem(atPath: io + suffix) }
        }

        let process = Process()
        if shell {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = arguments
        } else if let umask {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "umask \(umask) && exec \"$0\" \"$@\"", executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        process.environment = environment
        process.currentDirectoryURL = directory.url
        process.standardInput = stdinHandle
        process.standardOutput = stdoutHandle
        process.standardError = stderrHandle

        let state = RunState()
        let (status, reason): (Int32, Process.TerminationReason) = try await withCheckedThrowingContinuation { continuation in
            state.setContinuation(continuation)
            process.terminationHandler = { finished in
                state.finish(.success((finished.terminationStatus, finished.terminationReason)))
            }
            do {
                try process.run()
            } catch {
                state.finish(.failure(error))
                return
            }
            let pid = process.processIdentifier
            Self.timeoutQueue.asyncAfter(deadline: .now() + timeout) {
                if state.markTimedOutIfRunning() { Self.killTree(pid) }
            }
        }
        return StorectlResult(
            arguments: arguments,
            status: reason == .uncaughtSignal ? 128 + status : status,
            stdoutData: (try? Data(contentsOf: URL(fileURLWithPath: io + ".out"))) ?? Data(),
            stderrData: (try? Data(contentsOf: URL(fileURLWithPath: io + ".err"))) ?? Data(),
            timedOut: state.timedOut)
    }

    /// Where time limits fire. A serial queue of its own gets its own thread (it overcommits):
    /// a timer on the global queue waited behind blocked workers when the whole suite ran on
    /// two cores, and a 0.5 s limit fired after 10 s.
    private static let timeoutQueue = DispatchQueue(label: "storectl-tests.timeouts")

    /// SIGKILLs `pid` and, on Linux, every process descended from it (a shell's children, which
    /// would otherwise keep running and keep the run from being seen as finished).
    static func killTree(_ pid: pid_t) {
        var all = [pid]
        #if os(Linux)
        var children: [pid_t: [pid_t]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let process = pid_t(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")")
            else { continue }
            // After "pid (comm)": state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { children[parent, default: []].append(process) }
        }
        var index = 0
        while index < all.count {
            all += children[all[index]] ?? []
            index += 1
        }
        #endif
        // Parents first, so none starts another child after its children were collected.
        for process in all { kill(process, SIGKILL) }
    }

    /// `run` with variadic arguments.
    @discardableResult
    func callAsFunction(_ arguments: String..., environment: [String: String?] = [:], stdin: Data? = nil) async throws -> StorectlResult {
        try await run(arguments, environment: environment, stdin: stdin)
    }

    /// Refuses any run that could reach a store outside this instance's directory.
    private func checkIsolated(_ arguments: [String], _ environment: [String: String]) throws {
        let inside = { (path: String) in path.hasPrefix(directory.path + "/") || !path.hasPrefix("/") }
        let hasDB = arguments.contains { $0 == "--db" || $0.hasPrefix("--db=") }
        if let storectlDB = environment["STORECTL_DB"], !storectlDB.isEmpty, !hasDB, !inside(storectlDB) {
            throw StorectlError.unsafeEnvironment("STORECTL_DB \(storectlDB) is outside the test's directory")
        }
        guard let home = environment["HOME"], inside(home) else {
            throw StorectlError.unsafeEnvironment("HOME must be inside the test's directory")
        }
        if let dataHome = environment["XDG_DATA_HOME"], !dataHome.isEmpty, !inside(dataHome) {
            throw StorectlError.unsafeEnvironment("XDG_DATA_HOME must be inside the test's directory")
        }
    }
}

/// The shared state of one run: the continuation is resumed exactly once; the time limit kills
/// the process only while it still runs.
private final class RunState: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<(Int32, Process.TerminationReason), Error>?
    private var finished = false
    private var _timedOut = false

    var timedOut: Bool { lock.withLock { _timedOut } }

    func setContinuation(_ continuation: CheckedContinuation<(Int32, Process.TerminationReason), Error>) {
        lock.withLock { self.continuation = continuation }
    }

    func finish(_ result: Result<(Int32, Process.TerminationReason), Error>) {
        let continuation: CheckedContinuation<(Int32, Process.TerminationReason), Error>? = lock.withLock {
            guard !finished else { return nil }
            finished = true
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume(with: result)
    }

    func markTimedOutIfRunning() -> Bool {
        lock.withLock {
            guard !finished else { return false }
            _timedOut = true
            return true
        }
    }
}
