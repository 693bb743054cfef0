import Foundation
import StoreTestSupport

/// The median timing of each of `contenders` bodies, run in turns (run 1 of each, then run 2
/// of each...), each after a fresh `setup` for that contender (not timed): a load that comes
/// and goes during the measurement weighs on every contender alike.
func interleavedMedianSeconds(
    runs: Int, contenders: Int, setup: (_ contender: Int) async throws -> Void = { _ in },
    _ body: (_ contender: Int) async throws -> Void
) async rethrows -> [Double] {
    try await interleavedMedianOfTimed(runs: runs, contenders: contenders, setup: setup) { contender in
        let start = ContinuousClock.now
        try await body(contender)
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

/// The median of each contender's own timing (what `body` returns), run in turns as
/// `interleavedMedianSeconds` does: for workloads that time only part of a run.
func interleavedMedianOfTimed(
    runs: Int, contenders: Int, setup: (_ contender: Int) async throws -> Void,
    _ body: (_ contender: Int) async throws -> Double
) async rethrows -> [Double] {
    var times = Array(repeating: [Double](), count: contenders)
    for _ in 0..<runs {
        for contender in 0..<contenders {
            try await setup(contender)
            times[contender].append(try await body(contender))
        }
    }
    return times.map { $0.sorted()[$0.count / 2] }
}

/// A fresh temporary folder for one benchmark, removed at exit of the benchmark.
final class Scratch {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("store-bench-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    func remove(_ name: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path(name) + suffix) }
    }
    /// Deletes the folder and everything in it (feeds of hundreds of megabytes at large N).
    /// Called explicitly: `main.swift`'s globals are never deinitialized.
    func removeAll() { try? FileManager.default.removeItem(at: url) }
}

/// Runs a program to completion through the project's one process runner; its stdout. Throws
/// (with the end of its stderr) if it fails.
@discardableResult
func runProcess(_ executable: String, _ arguments: [String], stdin: String? = nil) async throws -> String {
    let outcome = try await ProcessRunner.run(
        executable, arguments, stdin: stdin.map { Data($0.utf8) }, timeLimit: .seconds(3 * 3600))
    guard outcome.succeeded else {
        throw BenchmarkError(
            "\(executable) \(arguments.joined(separator: " ")) exited \(outcome.status): \(outcome.stderr.suffix(2000))")
    }
    return outcome.stdout
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Finds a program on PATH.
func which(_ name: String) -> String? { ProcessRunner.which(name) }
