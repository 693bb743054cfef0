import Foundation
import Testing
@testable import Store

// Helpers for the observation suites: a probe that consumes a stream with deadlines (so no test
// can hang), a deadline race, feed files, and the storectl binary for cross-process tests.

/// A wait that ran past its deadline.
struct ObservationTimeout: Error, CustomStringConvertible {
    let what: String
    let seconds: Double
    var description: String { "timed out after \(seconds)s waiting for \(what)" }
}

/// A stream that ended while the test still expected an element.
struct ObservedStreamEnded: Error, CustomStringConvertible {
    let failure: String?
    var description: String { failure.map { "the stream failed: \($0)" } ?? "the stream finished" }
}

/// Runs `body`, racing it against a sleep of `seconds`: its result, or `ObservationTimeout` (the
/// body is then cancelled).
func withObservationDeadline<T: Sendable>(
    _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        defer { group.cancelAll() }
        // The first child to finish decides: the body's value, or nil from the sleep.
        guard let first = try await group.next(), let value = first else {
            throw ObservationTimeout(what: what, seconds: seconds)
        }
        return value
    }
}

/// Polls `condition` every 10 ms until it holds; false if it still does not after `seconds`.
func eventually(within seconds: Double = 5, _ condition: @Sendable () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
}

/// Consumes an async sequence in a task of its own (the "consuming task") and records what it
/// emits and how it ends, so a test awaits elements with a deadline instead of iterating.
final class StreamProbe<Element: Sendable>: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `elements`, `consumed` and `end` are read and written only
    // while `lock` is held; `task` is set once in init, before the probe is shared.
    enum End: Sendable {
        case finished
        case failed(String)
    }

    private let lock = NSLock()
    private var elements: [Element] = []
    private var consumed = 0
    private var end: End?
    private var task: Task<Void, Never>?

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        task = Task { [self] in
            do {
                for try await element in sequence { lock.withLock { elements.append(element) } }
                lock.withLock { end = .finished }
            } catch is CancellationError {
                lock.withLock { end = .finished }
            } catch {
                lock.withLock { end = .failed(String(describing: error)) }
            }
        }
    }

    deinit { task?.cancel() }

    /// Everything emitted so far.
    var all: [Element] { lock.withLock { elements } }

    /// How the stream ended; nil while it runs.
    var ended: End? { lock.withLock { end } }

    /// The next element not yet taken; `ObservationTimeout` if none comes within `seconds`,
    /// `ObservedStreamEnded` if the stream ends first.
    func next(within seconds: Double = 10) async throws -> Element {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            let (element, ending): (Element?, End?) = lock.withLock {
                if consumed < elements.count {
                    consumed += 1
                    return (elements[consumed - 1], nil)
                }
                return (nil, self.end)
            }
            if let element { return element }
            if let ending {
                if case .failed(let reason) = ending { throw ObservedStreamEnded(failure: reason) }
                throw ObservedStreamEnded(failure: nil)
            }
            if ContinuousClock.now >= deadline { throw ObservationTimeout(what: "the next element", seconds: seconds) }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Takes elements until one satisfies `predicate` and returns every element taken, that one
    /// last; throws if none does within `seconds` in all.
    func take(until predicate: (Element) -> Bool, within seconds: Double = 10) async throws -> [Element] {
        let start = ContinuousClock.now
        var taken: [Element] = []
        while true {
            let left = seconds - (ContinuousClock.now - start).seconds
            let element = try await next(within: max(0.01, left))
            taken.append(element)
            if predicate(element) { return taken }
        }
    }

    /// The elements (not yet taken) that arrive within `seconds`; waits the whole time.
    func untakenAfterWaiting(_ seconds: Double) async throws -> [Element] {
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        return lock.withLock { Array(elements[consumed...]) }
    }

    /// Cancels the consuming task.
    func cancel() { task?.cancel() }

    /// Waits for the stream to end; nil if it has not within `seconds`.
    func waitForEnd(within seconds: Double = 5) async -> End? {
        _ = await eventually(within: seconds) { self.ended != nil }
        return ended
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

enum ObservationFixtures {
    static func event(_ id: String, on date: String, title: String? = nil) -> Event {
        Event(id: id, title: title ?? "Event \(id)", date: Fixtures.date(date))
    }

    /// Writes a version-1 feed holding `events` (and `frameworks`, and tombstones of events) to
    /// `name` in `directory`.
    static func writeFeed(
        events: [Event], frameworks: [Framework] = [], deletedEvents: [String] = [],
        to name: String, in directory: TemporaryDirectory
    ) throws -> URL {
        let url = directory.url.appendingPathComponent(name)
        var feed: [String: Any] = ["version": 1]
        feed["events"] = events.map { event -> [String: Any] in
            var object: [String: Any] = ["id": event.id, "title": event.title, "date": event.date.description]
            if let notes = event.notes { object["notes"] = notes }
            return object
        }
        feed["frameworks"] = frameworks.map { framework -> [String: Any] in
            ["id": framework.id, "name": framework.name, "imageName": framework.imageName,
             "urlString": framework.urlString, "description": framework.description]
        }
        if !deletedEvents.isEmpty { feed["deleted"] = ["events": deletedEvents] }
        let data = try JSONSerialization.data(withJSONObject: feed, options: [.sortedKeys])
        try data.write(to: url)
        return url
    }
}

/// The built `storectl` executable (copied from Tests/StorectlTests/Support/Storectl.swift):
/// `$STORECTL_BIN`, else the nearest `storectl` found walking up from the test bundle.
enum ObservationStorectl {
    struct NotFound: Error, CustomStringConvertible {
        let searched: [String]
        var description: String {
            "cannot find the storectl executable: set STORECTL_BIN, or build it next to the test bundle "
                + "(searched upwards from \(searched.joined(separator: ", ")))"
        }
    }

    struct Result: Sendable, CustomStringConvertible {
        var arguments: [String]
        var status: Int32
        var stdout: String
        var stderr: String
        var description: String { "storectl \(arguments.joined(separator: " ")) -> \(status)\n\(stdout)\n\(stderr)" }
    }

    static let executable: Swift.Result<URL, NotFound> = {
        let fileManager = FileManager.default
        if let path = ProcessInfo.processInfo.environment["STORECTL_BIN"], !path.isEmpty {
            return fileManager.isExecutableFile(atPath: path) ? .success(URL(fileURLWithPath: path))
                : .failure(NotFound(searched: ["STORECTL_BIN=\(path)"]))
        }
        let cwd = URL(fileURLWithPath: fileManager.currentDirectoryPath, isDirectory: true)
        var starts = [Bundle.main.bundleURL]
        if let first = CommandLine.arguments.first { starts.append(URL(fileURLWithPath: first, relativeTo: cwd)) }
        starts += Bundle.allBundles.map(\.bundleURL).filter { $0.pathExtension == "xctest" }
        for start in starts {
            var directory = start.absoluteURL.standardizedFileURL
            while true {
                let candidate = directory.appendingPathComponent("storectl")
                var isDirectory: ObjCBool = false
                if fileManager.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                   fileManager.isExecutableFile(atPath: candidate.path) {
                    return .success(candidate)
                }
                let parent = directory.deletingLastPathComponent().standardizedFileURL
                if parent.path == directory.path || directory.path == "/" { break }
                directory = parent
            }
        }
        return .failure(NotFound(searched: starts.map(\.path)))
    }()

    /// Runs `storectl --db <database> arguments...` in `directory` (its HOME and XDG_DATA_HOME
    /// too, so nothing outside it is touched); killed after `timeout` seconds.
    static func run(
        _ arguments: [String], database: String, in directory: TemporaryDirectory, timeout: Double = 20
    ) async throws -> Result {
        let process = Process()
        process.executableURL = try executable.get()
        let allArguments = arguments + ["--db", database]
        process.arguments = allArguments
        var environment = ProcessInfo.processInfo.environment
        for key in environment.keys where key.hasPrefix("STORECTL_") || key.hasPrefix("XDG_") { environment[key] = nil }
        environment["HOME"] = directory.url.path
        environment["XDG_DATA_HOME"] = directory.url.path
        process.environment = environment
        process.currentDirectoryURL = directory.url
        let io = directory.path("storectl-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: io + ".out", contents: nil)
        _ = FileManager.default.createFile(atPath: io + ".err", contents: nil)
        let out = try FileHandle(forWritingTo: URL(fileURLWithPath: io + ".out"))
        let err = try FileHandle(forWritingTo: URL(fileURLWithPath: io + ".err"))
        defer { try? out.close(); try? err.close() }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        let waiter = ExitWaiter()
        process.terminationHandler = { finished in waiter.resume(finished.terminationStatus) }
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            waiter.set(continuation)
            do {
                try process.run()
            } catch {
                waiter.fail(error)
                return
            }
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                if waiter.resume(-1) { kill(pid, SIGKILL) }
            }
        }
        return Result(
            arguments: allArguments, status: status,
            stdout: (try? String(contentsOfFile: io + ".out", encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: io + ".err", encoding: .utf8)) ?? "")
    }
}

/// Resumes one continuation exactly once: with the exit status, a timeout (-1) or an error.
private final class ExitWaiter: @unchecked Sendable {
    // Why @unchecked Sendable is safe: both properties are read and written only under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Int32, any Error>?
    private var done = false

    func set(_ continuation: CheckedContinuation<Int32, any Error>) { lock.withLock { self.continuation = continuation } }

    /// True if this call decided the outcome.
    @discardableResult
    func resume(_ status: Int32) -> Bool { finish(.success(status)) }

    func fail(_ error: any Error) { _ = finish(.failure(error)) }

    private func finish(_ result: Swift.Result<Int32, any Error>) -> Bool {
        let continuation: CheckedContinuation<Int32, any Error>? = lock.withLock {
            guard !done else { return nil }
            done = true
            defer { self.continuation = nil }
            return self.continuation
        }
        continuation?.resume(with: result)
        return continuation != nil
    }
}

/// How soon a change committed by another connection or process must reach an observer. The
/// store polls every 100 ms, so one second holds with room to spare on a quiet machine
/// (`STORE_CROSS_PROCESS_DEADLINE_MS=1000`); the default leaves room for the whole suite
/// running in parallel on two cores, where a single fetch can wait that long for a thread.
let crossProcessDeadline: Duration = .milliseconds(
    Int(ProcessInfo.processInfo.environment["STORE_CROSS_PROCESS_DEADLINE_MS"] ?? "") ?? 2000)
