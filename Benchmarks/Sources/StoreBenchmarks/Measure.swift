import Foundation

/// The median timing of each of `contenders` bodies, run in turns (run 1 of each, then run 2
/// of each...), each after a fresh `setup` for that contender (not timed): a load that comes
/// and goes during the measurement weighs on every contender alike.
func interleavedMedianSeconds(
    runs: Int, contenders: Int, setup: (_ contender: Int) async throws -> Void = { _ in }, _ body: (_ contender: Int) async throws -> Void
) async rethrows -> [Double] {
    var times = Array(repeating: [Double](), count: contenders)
    for _ in 0..<runs {
        for contender in 0..<contenders {
            try await setup(contender)
            let start = ContinuousClock.now
            try await body(contender)
            let elapsed = ContinuousClock.now - start
            times[contender].append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
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

/// Runs a program to completion; throws if it fails.
@discardableResult
func runProcess(_ executable: String, _ arguments: [String], stdin: String? = nil) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    // Standard error goes to a file (a second pipe could fill while stdout is read), and is
    // shown if the process fails.
    let errors = FileManager.default.temporaryDirectory.appendingPathComponent("benchmark-stderr-\(UUID().uuidString)")
    FileManager.default.createFile(atPath: errors.path, contents: nil)
    defer { try? FileManager.default.removeItem(at: errors) }
    process.standardError = try FileHandle(forWritingTo: errors)
    let input = Pipe()
    if stdin != nil { process.standardInput = input }
    try process.run()
    if let stdin {
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        let message = String(decoding: (try? Data(contentsOf: errors)) ?? Data(), as: UTF8.self).suffix(2000)
        throw BenchmarkError("\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(message)")
    }
    return String(decoding: data, as: UTF8.self)
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Finds a program on PATH.
func which(_ name: String) -> String? {
    for folder in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(folder)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
}
