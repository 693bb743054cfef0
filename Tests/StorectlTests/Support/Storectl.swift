import Foundation
import StoreTestSupport

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
/// real store is never touched.
struct Storectl: Sendable {
    /// The temporary directory all of this instance's files live in (removed when released).
    let directory: TemporaryDirectory
    /// `$HOME` for every run.
    let home: String
    /// `$XDG_DATA_HOME` for every run.
    let dataHome: String
    /// The store file `STORECTL_DB` names by default.
    let db: String

    /// Generous: a run that needs it has hung (a loaded 2-core machine takes seconds, not this;
    /// a full run with both cores busy takes about 300 s, every test at once).
    static let defaultTimeout: TimeInterval = 240

    init() throws {
        directory = try TemporaryDirectory(prefix: "storectl-e2e")
        home = try directory.makeDirectory("home")
        dataHome = try directory.makeDirectory("xdg-data")
        db = directory.file("store.sqlite")
    }

    // MARK: Locating the binary

    /// The `storectl` executable: `$STORECTL_BIN`, else the one SwiftPM built beside this test
    /// bundle (this target depends on `storectl`, so `swift test` builds it first: never a
    /// stale binary found elsewhere).
    static let executable: Result<URL, StorectlError> = locateExecutable()

    static func executableURL() throws -> URL { try executable.get() }

    private static func locateExecutable() -> Result<URL, StorectlError> {
        if let path = ProcessInfo.processInfo.environment["STORECTL_BIN"], !path.isEmpty {
            guard isExecutableFile(path) else { return .failure(.executableNotFound(searched: ["STORECTL_BIN=\(path)"])) }
            return .success(URL(fileURLWithPath: path))
        }
        // The bundle: .build/<triple>/debug/StorePackageTests.xctest (a folder on macOS, the
        // test executable itself on Linux); storectl is its sibling.
        var folders = Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }
            .map { $0.deletingLastPathComponent() }
        if let first = CommandLine.arguments.first {
            folders.append(URL(fileURLWithPath: first).absoluteURL.deletingLastPathComponent())
        }
        for folder in folders {
            let candidate = folder.appendingPathComponent("storectl")
            if isExecutableFile(candidate.path) { return .success(candidate) }
        }
        return .failure(.executableNotFound(searched: folders.map(\.path)))
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

    /// Runs `storectl arguments...` through the one process runner (`ProcessRunner`).
    /// - Parameters:
    ///   - environment: changes to the default environment; a nil value removes the variable.
    ///   - stdin: bytes for standard input (default: none).
    ///   - umask: runs it under this umask (through /bin/sh).
    ///   - shell: runs `/bin/sh arguments...` instead, e.g. `["-c", script, storectlPath]`, with
    ///     the same environment (for loops of storectl runs).
    ///   - timeout: its process group is killed (SIGKILL) after this many seconds. A limit only
    ///     stops a run that hangs: it is no measure of speed.
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
        let (program, programArguments): (String, [String])
        if shell {
            (program, programArguments) = ("/bin/sh", arguments)
        } else if let umask {
            (program, programArguments) = (
                "/bin/sh", ["-c", "umask \(umask) && exec \"$0\" \"$@\"", executable.path] + arguments
            )
        } else {
            (program, programArguments) = (executable.path, arguments)
        }
        let outcome = try await ProcessRunner.run(
            program, programArguments, environment: environment, workingDirectory: directory.path,
            stdin: stdin, timeLimit: .milliseconds(Int(timeout * 1000)))
        return StorectlResult(
            arguments: arguments, status: outcome.status, stdoutData: outcome.stdoutData,
            stderrData: outcome.stderrData, timedOut: outcome.timedOut)
    }

    /// Starts `storectl arguments...` in the background (for `watch`, and for runs a test
    /// interrupts), with the same environment and folder as `run`; `shell` as in `run`.
    func start(_ arguments: [String], environment overrides: [String: String?] = [:], shell: Bool = false) async throws
        -> BackgroundProcess
    {
        let environment = environment(overrides)
        try checkIsolated(arguments, environment)
        return try await ProcessRunner.start(
            shell ? "/bin/sh" : try Self.executableURL().path, arguments, environment: environment,
            workingDirectory: directory.path)
    }

    /// `run` with variadic arguments.
    @discardableResult
    func callAsFunction(_ arguments: String..., environment: [String: String?] = [:], stdin: Data? = nil) async throws
        -> StorectlResult
    {
        try await run(arguments, environment: environment, stdin: stdin)
    }

    /// A command prefix for scripts that interrupt a background job of theirs with SIGINT:
    /// `\(Storectl.withInterruptEnabled) "$0" sync ... &`. A shell starts its background jobs with
    /// SIGINT ignored, and storectl keeps a signal ignored at entry ignored; this restores the
    /// default, then execs the command (the same process, so `$!` is storectl's pid).
    static let withInterruptEnabled =
        #"python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])'"#

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
