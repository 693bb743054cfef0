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

/// A process started by `ProcessRunner.start`, running while the test goes on: its output so
/// far, waits for output that satisfies a condition (woken by the output itself, no polling),
/// signals, and its exit.
public final class BackgroundProcess: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `output` is a lock box; `pid`, `command` and `inputFD`
    // are constants set in init; `run` is set once in `start` before the instance is shared.
    public let command: [String]
    /// The process's id, which is also its process group's.
    public let pid: pid_t
    private let inputFD: Int32
    private let output: OutputBox
    private var run: Task<Void, Never>?

    private init(command: [String], pid: pid_t, inputFD: Int32, output: OutputBox) {
        self.command = command
        self.pid = pid
        self.inputFD = inputFD
        self.output = output
    }

    static func start(
        command: [String], environment: Subprocess.Environment, workingDirectory: String?
    ) async throws -> BackgroundProcess {
        ProcessRunner.ignoreBrokenPipes
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        // The write end stays here: no other child may inherit it (it would keep stdin open).
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        let readEnd = FileDescriptor(rawValue: fds[0]), writeEnd = fds[1]
        let output = OutputBox()
        let started = OneShot<pid_t>()
        let run = Task {
            do {
                let result = try await Subprocess.run(
                    .path(FilePath(command[0])),
                    arguments: Arguments(Array(command.dropFirst())),
                    environment: environment,
                    workingDirectory: workingDirectory.map { FilePath($0) },
                    platformOptions: ProcessRunner.ownProcessGroup(),
                    input: .fileDescriptor(readEnd, closeAfterSpawningProcess: true),
                    output: .sequence,
                    error: .sequence
                ) { execution in
                    started.resume(.success(execution.processIdentifier.value))
                    async let errors: Void = {
                        for try await chunk in execution.standardError {
                            chunk.withUnsafeBytes { output.append(Data($0), toStderr: true) }
                        }
                    }()
                    for try await chunk in execution.standardOutput {
                        chunk.withUnsafeBytes { output.append(Data($0), toStderr: false) }
                    }
                    try await errors
                }
                output.finish(status: ProcessRunner.shellStatus(result.terminationStatus), error: nil)
            } catch {
                started.resume(.failure(error))
                output.finish(status: nil, error: error)
            }
        }
        let pid: pid_t
        do {
            pid = try await started.value
        } catch {
            close(writeEnd)
            throw error
        }
        let process = BackgroundProcess(command: command, pid: pid, inputFD: writeEnd, output: output)
        process.run = run
        return process
    }

    deinit {
        if exitStatus == nil { kill(-pid, SIGKILL) }
        closeInput()
    }

    /// stdout so far.
    public var stdout: String { String(decoding: output.snapshot.stdout, as: UTF8.self) }
    /// stderr so far.
    public var stderr: String { String(decoding: output.snapshot.stderr, as: UTF8.self) }
    /// The exit status (128 + the signal for a signal) once it has ended and its output is
    /// all read; nil while it runs.
    public var exitStatus: Int32? { output.snapshot.status }

    /// The complete lines of stdout so far (the unfinished last line excluded).
    public var completeLines: [String] {
        var lines = stdout.components(separatedBy: "\n")
        lines.removeLast()
        return lines
    }

    /// Waits until `condition` holds for the output so far (checked at once and after each
    /// chunk of output and at the exit); false if it does not within `limit`.
    public func wait(
        within limit: Duration = .seconds(240), until condition: @escaping @Sendable (BackgroundProcess) -> Bool
    ) async -> Bool {
        await output.wait(within: limit) { condition(self) }
    }

    /// Waits for the exit; its status, or nil if it still runs after `limit`.
    public func waitForExit(within limit: Duration = .seconds(240)) async -> Int32? {
        _ = await output.wait(within: limit) { self.exitStatus != nil }
        return exitStatus
    }

    /// Sends `signal` to the process (not its group) if it still runs.
    public func send(_ signal: Int32) {
        if exitStatus == nil { kill(pid, signal) }
    }

    /// Closes its stdin (a process that reads it sees the end).
    public func closeInput() {
        output.closeOnce { close(inputFD) }
    }

    /// SIGKILLs its process group (if it still runs) and waits for the exit.
    public func stop() async {
        closeInput()
        if exitStatus == nil { kill(-pid, SIGKILL) }
        await run?.value
    }
}

/// What a background process printed, whether it ended, and who waits for what.
final class OutputBox: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every property is read and written only while `lock` is
    // held; waiters are resumed after the lock is released.
    struct Snapshot {
        var stdout = Data()
        var stderr = Data()
        var status: Int32?
        var ended = false
        var failure: (any Error)?
    }

    private struct Waiter {
        let condition: @Sendable () -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private let lock = NSLock()
    private var state = Snapshot()
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiter = 0
    private var inputClosed = false
    private static let timers = DispatchQueue(label: "store-test-support.output-waits")

    var snapshot: Snapshot { lock.withLock { state } }

    func append(_ data: Data, toStderr: Bool) {
        lock.withLock {
            if toStderr { state.stderr.append(data) } else { state.stdout.append(data) }
        }
        wakeWaiters()
    }

    func finish(status: Int32?, error: (any Error)?) {
        lock.withLock {
            state.ended = true
            state.status = status ?? -1
            state.failure = error
        }
        wakeWaiters()
    }

    func closeOnce(_ body: () -> Void) {
        let first = lock.withLock { () -> Bool in
            defer { inputClosed = true }
            return !inputClosed
        }
        if first { body() }
    }

    /// Conditions are evaluated outside the lock (they read the snapshot through it).
    private func wakeWaiters() {
        let current = lock.withLock { waiters }
        for (id, waiter) in current where waiter.condition() {
            resume(id, with: true)
        }
    }

    private func resume(_ id: Int, with value: Bool) {
        let waiter = lock.withLock { waiters.removeValue(forKey: id) }
        waiter?.continuation.resume(returning: value)
    }

    /// At the time limit: the condition's last verdict, if the wait is still pending.
    private func expire(_ id: Int) {
        guard let waiter = lock.withLock({ waiters.removeValue(forKey: id) }) else { return }
        waiter.continuation.resume(returning: waiter.condition())
    }

    func wait(within limit: Duration, until condition: @escaping @Sendable () -> Bool) async -> Bool {
        if condition() { return true }
        return await withCheckedContinuation { continuation in
            let id = lock.withLock { () -> Int in
                defer { nextWaiter += 1 }
                waiters[nextWaiter] = Waiter(condition: condition, continuation: continuation)
                return nextWaiter
            }
            // Output that arrived between the first check and the registration.
            if condition() { resume(id, with: true); return }
            let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
            Self.timers.asyncAfter(deadline: .now() + seconds) { [self] in expire(id) }
        }
    }
}

/// A value set once, awaited by one caller.
final class OneShot<Value: Sendable>: @unchecked Sendable {
    // Why @unchecked Sendable is safe: both properties are read and written only under `lock`;
    // the continuation is resumed once, outside it.
    private let lock = NSLock()
    private var result: Result<Value, any Error>?
    private var continuation: CheckedContinuation<Value, any Error>?

    func resume(_ value: Result<Value, any Error>) {
        let waiting = lock.withLock { () -> CheckedContinuation<Value, any Error>? in
            guard result == nil else { return nil }
            result = value
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(with: value)
    }

    var value: Value {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let ready = lock.withLock { () -> Result<Value, any Error>? in
                    if result == nil { self.continuation = continuation }
                    return result
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }
}
