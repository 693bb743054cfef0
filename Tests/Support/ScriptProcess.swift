import Foundation

/// A python3 script running in the background through the one process runner: it prints one
/// first line (a port, or "ready") once it serves, and runs until its stdin closes (so it never
/// outlives the test process) or it is stopped. Test servers on 127.0.0.1 and other helper
/// processes are made of these.
public final class ScriptProcess: Sendable {
    /// The script's first line, without its newline.
    public let firstLine: String
    public let process: BackgroundProcess

    private init(firstLine: String, process: BackgroundProcess) {
        self.firstLine = firstLine
        self.process = process
    }

    /// Starts `python3 -c script arguments...` and returns once it has printed its first line.
    public static func start(python script: String, _ arguments: [String] = []) async throws -> ScriptProcess {
        let python = ["/usr/bin/python3", "/usr/local/bin/python3", "/opt/homebrew/bin/python3"]
            .first { FileManager.default.isExecutableFile(atPath: $0) }
        let (executable, prefix) = python.map { ($0, [String]()) } ?? ("/usr/bin/env", ["python3"])
        let process = try await ProcessRunner.start(executable, prefix + ["-c", script] + arguments)
        let printed = await process.wait(within: .seconds(240)) { $0.stdout.contains("\n") || $0.exitStatus != nil }
        let line = process.stdout.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard printed, !line.isEmpty else {
            await process.stop()
            throw StartFailed(stderr: process.stderr)
        }
        return ScriptProcess(firstLine: line, process: process)
    }

    /// The first line as a port number, for servers that print theirs.
    public var port: Int? { Int(firstLine.trimmingCharacters(in: .whitespaces)).flatMap { (1...65535).contains($0) ? $0 : nil } }

    /// Closes its stdin (a well-behaved script ends) and kills it if it still runs; returns at once.
    public func stop() {
        process.closeInput()
        process.send(SIGKILL)
    }

    /// Closes its stdin and waits for it to end by itself.
    public func finish() async -> Int32? {
        process.closeInput()
        return await process.waitForExit()
    }

    public struct StartFailed: Error, CustomStringConvertible {
        public let stderr: String
        public init(stderr: String) { self.stderr = stderr }
        public var description: String { "the script did not print its first line; stderr: \(stderr)" }
    }
}
