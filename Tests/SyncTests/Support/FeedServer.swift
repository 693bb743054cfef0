import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Store
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `Server/feed_server.py` running on 127.0.0.1 for one test, serving the files of its own
/// temporary directory. Stopped by `stop()` or when released; the script also exits on its own
/// when its stdin closes (this process died) or after `lifetime` seconds.
final class FeedServer {
    /// http://127.0.0.1:<port>
    let baseURL: URL
    /// The directory the server serves files from.
    let root: URL
    private let process: Process
    private let input: Pipe
    private var stopped = false

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    init(lifetime: Int = 120) throws {
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Server/feed_server.py")
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("feed-server-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)

        process = Process()
        let (python, prefix) = Self.python3
        process.executableURL = python
        process.arguments = prefix + [script.path, "--root", root.path, "--lifetime", String(lifetime)]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()

        // The first line is the port; the script writes nothing else to stdout.
        let line = Self.readLine(output.fileHandleForReading.fileDescriptor)
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = Int(text), (1...65535).contains(port) else {
            process.terminate()
            try? FileManager.default.removeItem(at: root)
            throw StartError(description: "feed_server.py did not print a port (got \(text.debugDescription))")
        }
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Starts a server; prefer this to `init` in async tests. `init` blocks its thread until
    /// the script has started (tens to hundreds of milliseconds when many start at once), and
    /// Swift's cooperative pool has only as many threads as cores (on Linux they are the
    /// dispatch global queue's, so `DispatchQueue.global()` is no way out): a few blocked
    /// threads stall every other test, timing tests included. This waits on a thread of its own.
    static func start(lifetime: Int = 120) async throws -> FeedServer {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try FeedServer(lifetime: lifetime) })
            }.start()
        }
    }

    deinit { stop() }

    /// python3: the system one when there is one (it starts faster than a version manager's
    /// shim), else whatever `python3` the PATH names.
    private static let python3: (URL, [String]) = {
        for path in ["/usr/bin/python3", "/usr/local/bin/python3", "/opt/homebrew/bin/python3"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return (URL(fileURLWithPath: path), [])
        }
        return (URL(fileURLWithPath: "/usr/bin/env"), ["python3"])
    }()

    /// Reads up to the first newline or EOF, retrying reads a signal interrupts (FileHandle's
    /// availableData traps on EINTR).
    private static func readLine(_ fd: Int32) -> Data {
        var line = Data()
        var byte: UInt8 = 0
        while line.count < 64 {
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 || byte == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        return line
    }

    /// Ends the server and removes its directory.
    func stop() {
        guard !stopped else { return }
        stopped = true
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        try? FileManager.default.removeItem(at: root)
    }

    /// `baseURL` + `path` (which may carry a query: "/slow?seconds=5").
    func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path)!
    }

    /// Writes `contents` as `name` under the served directory, optionally with a modification
    /// date (the Last-Modified the server reports).
    @discardableResult
    func publish(_ name: String, _ contents: String, modified: Date? = nil) throws -> URL {
        try publish(name, data: Data(contents.utf8), modified: modified)
    }

    /// `publish` for bytes (images).
    @discardableResult
    func publish(_ name: String, data: Data, modified: Date? = nil) throws -> URL {
        let file = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
        if let modified {
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file.path)
        }
        return url("/" + name)
    }

    /// Requests the server has seen, per path (without query).
    func hits() async throws -> [String: Int] {
        try await json("/hits")
    }

    func hits(_ path: String) async throws -> Int {
        try await hits()[path] ?? 0
    }

    /// The body bytes the last `/big` response wrote before it ended (or its client left),
    /// waiting up to `timeout` for that response to end.
    func bigBytesSent(timeout: Duration = .seconds(5)) async throws -> Int? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let sent: [String: Int] = try await json("/bytes-sent")
            if let bytes = sent["/big"] { return bytes }
            if ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// A JSON endpoint of the server (/hits, /bytes-sent, /headers-echo), decoded.
    func json<T: Decodable>(_ path: String) async throws -> T {
        let response = try await HTTPTransport.live.send(HTTPRequest(url: url(path), timeout: .seconds(5)))
        return try JSONDecoder().decode(T.self, from: response.body)
    }
}
