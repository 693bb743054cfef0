import Foundation
import Subprocess

#if canImport(System)
    import System
#else
    import SystemPackage
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What one run of a program produced.
public struct ProcessOutcome: Sendable, CustomStringConvertible {
    /// The program and its arguments.
    public var command: [String]
    /// The exit status; 128 + the signal number if a signal ended it (as a shell reports it).
    public var status: Int32
    public var stdoutData: Data
    public var stderrData: Data
    /// True if it ran past its time limit and was killed.
    public var timedOut: Bool

    public var stdout: String { String(decoding: stdoutData, as: UTF8.self) }
    public var stderr: String { String(decoding: stderrData, as: UTF8.self) }
    public var succeeded: Bool { status == 0 && !timedOut }

    public var description: String {
        "\(command.joined(separator: " ")) -> exit \(status)\(timedOut ? " (timed out)" : "")\n"
            + "--- stdout ---\n\(stdout)\n--- stderr ---\n\(stderr)"
    }
}

/// The one way tests, benchmarks and harnesses start a process.
///
/// Built on swift-subprocess, which spawns without Foundation's `Process` (whose `run()` can
/// crash on Linux up to Swift 6.3.1 reading `/proc/self/fd`, swift-corelibs-foundation #5472)
/// and waits for the child without holding a thread of Swift's cooperative pool.
///
/// Every process is the leader of a process group of its own, so a time limit kills what it
/// started too (a shell's children). Time limits fire on a serial queue of their own (it gets a
/// thread of its own), never on the cooperative pool, which a busy suite can fill.
public enum ProcessRunner {
    /// How much output a run keeps (a run that prints more fails).
    public static let outputLimit = 1 << 30

    /// Runs `executable arguments...` to its end and collects stdout and stderr.
    /// - Parameters:
    ///   - environment: the child's whole environment; nil inherits this process's.
    ///   - workingDirectory: where it runs; nil is this process's.
    ///   - stdin: its standard input (nil: /dev/null).
    ///   - timeLimit: SIGKILLs its process group after this long; `timedOut` says so.
    public static func run(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        workingDirectory: String? = nil,
        stdin: Data? = nil,
        timeLimit: Duration = .seconds(120)
    ) async throws -> ProcessOutcome {
        ignoreBrokenPipes
        let watchdog = Watchdog()
        let configuration = Configuration(
            executable: .path(FilePath(executable)),
            arguments: Arguments(arguments),
            environment: subprocessEnvironment(environment),
            workingDirectory: workingDirectory.map { FilePath($0) },
            platformOptions: ownProcessGroup())
        let result =
            if let stdin {
                // From a file, not a pipe: a child that exits without reading all of it is no error
                // (swift-subprocess 1.0.2 traps when writing its pipe input fails).
                try await withInputFile(stdin) { input in
                    try await collect(
                        configuration, input: .fileDescriptor(input, closeAfterSpawningProcess: false),
                        watchdog: watchdog, timeLimit: timeLimit)
                }
            } else {
                try await collect(configuration, input: .none, watchdog: watchdog, timeLimit: timeLimit)
            }
        watchdog.disarm()
        // Timed out only if the watchdog's SIGKILL ended it: a run that exited by itself is
        // whole, however late this task was resumed to collect it (a busy suite once left an
        // `images put` that had exited 0 uncollected past its 120 s, and failed it).
        let killed: Bool
        if case .signaled(SIGKILL) = result.terminationStatus { killed = true } else { killed = false }
        return ProcessOutcome(
            command: [executable] + arguments,
            status: shellStatus(result.terminationStatus),
            stdoutData: result.standardOutput,
            stderrData: result.standardError,
            timedOut: watchdog.fired && killed)
    }

    private static func collect<Input: InputProtocol>(
        _ configuration: Configuration, input: Input, watchdog: Watchdog, timeLimit: Duration
    ) async throws -> ExecutionResult<Void, DataOutput, DataOutput> {
        try await Subprocess.run(
            configuration, input: input, output: .data(limit: outputLimit), error: .data(limit: outputLimit)
        ) { execution in
            watchdog.arm(execution.processIdentifier.value, after: timeLimit)
        }
    }

    /// Runs `body` with a descriptor open for reading on a temporary file holding `data`; the
    /// file is unlinked at once, so nothing is left behind.
    private static func withInputFile<T>(_ data: Data, _ body: (FileDescriptor) async throws -> T) async throws -> T {
        let path = NSTemporaryDirectory() + "/process-runner-stdin-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw POSIXError(.EIO)
        }
        let descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        unlink(path)
        defer { try? descriptor.close() }
        return try await body(descriptor)
    }

    /// A child that exits before reading all its stdin makes writing the rest fail with EPIPE;
    /// SIGPIPE would kill this whole process (the test runner) instead. Ignored once, here.
    static let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

    /// Starts `executable arguments...` in the background and returns once it runs. Its stdout
    /// and stderr are collected as they come; its stdin is a pipe that stays open until
    /// `BackgroundProcess.closeInput()`, or until the `BackgroundProcess` is released, which
    /// also kills the process group if it still runs.
    public static func start(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        workingDirectory: String? = nil
    ) async throws -> BackgroundProcess {
        try await BackgroundProcess.start(
            command: [executable] + arguments, environment: subprocessEnvironment(environment),
            workingDirectory: workingDirectory)
    }

    /// Finds a program on PATH.
    public static func which(_ name: String) -> String? {
        for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    static func subprocessEnvironment(_ environment: [String: String]?) -> Subprocess.Environment {
        guard let environment else { return .inherit }
        var values: [Subprocess.Environment.Key: String] = [:]
        for (key, value) in environment { values[Subprocess.Environment.Key(stringLiteral: key)] = value }
        return .custom(values)
    }

    static func ownProcessGroup() -> PlatformOptions {
        var options = PlatformOptions()
        // 0: a new group whose id is the child's pid.
        options.processGroupID = 0
        return options
    }

    static func shellStatus(_ status: TerminationStatus) -> Int32 {
        switch status {
        case .exited(let code): code
        case .signaled(let signal): 128 + signal
        }
    }
}

/// Kills a process group once a time limit passes, from a serial queue of its own.
final class Watchdog: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `state` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var state: (armed: Bool, fired: Bool) = (false, false)
    private static let queue = DispatchQueue(label: "store-test-support.time-limits")

    var fired: Bool { lock.withLock { state.fired } }

    func arm(_ pid: pid_t, after limit: Duration) {
        lock.withLock { state.armed = true }
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        Self.queue.asyncAfter(deadline: .now() + seconds) { [self] in
            let fire = lock.withLock { () -> Bool in
                guard state.armed else { return false }
                state.fired = true
                return true
            }
            // The whole group: a shell and everything it started. A pid is not reused while a
            // process of its group lives, and `disarm()` follows the reaping of the last one at
            // once, so the group killed is the one started.
            if fire { kill(-pid, SIGKILL) }
        }
    }

    /// Called once the process has ended and been reaped.
    func disarm() { lock.withLock { state.armed = false } }
}

extension ProcessRunner {
    /// Runs `executable arguments...` to its end, blocking the calling thread, with stdin,
    /// stdout and stderr on /dev/null; its exit status (128 + the signal), or -1 if it could not
    /// be started. Only for what must be known synchronously (a test trait's probe of what this
    /// machine allows), never from a task that could await `run` instead. `posix_spawn`
    /// directly: swift-subprocess is async only.
    public static func runBlocking(_ executable: String, _ arguments: [String]) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor in Int32(0)...2 {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
