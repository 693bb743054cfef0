import Foundation
import Store
import StoreTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `Server/feed_server.py` running on 127.0.0.1 for one test, serving the files of its own
/// temporary directory, started by the one process runner. Stopped by `stop()` or when released;
/// the script also exits on its own when its stdin closes (this process died) or after
/// `lifetime` seconds.
final class FeedServer: Sendable {
    /// http://127.0.0.1:<port>
    let baseURL: URL
    /// The directory the server serves files from.
    let root: URL
    private let process: BackgroundProcess
    private let directory: TemporaryDirectory

    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    private init(baseURL: URL, directory: TemporaryDirectory, process: BackgroundProcess) {
        self.baseURL = baseURL
        self.directory = directory
        root = directory.url
        self.process = process
    }

    /// Starts a server and returns once it listens (it prints its port, then nothing else).
    static func start(lifetime: Int = 900) async throws -> FeedServer {
        let script = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Server/feed_server.py")
        let directory = try TemporaryDirectory(prefix: "feed-server")
        let (python, prefix) = python3
        let process = try await ProcessRunner.start(
            python, prefix + [script.path, "--root", directory.path, "--lifetime", String(lifetime)])
        let printed = await process.wait(within: .seconds(240)) { $0.stdout.contains("\n") || $0.exitStatus != nil }
        let text = process.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard printed, let port = Int(text), (1...65535).contains(port) else {
            await process.stop()
            throw StartError(
                description: "feed_server.py did not print a port (got \(text.debugDescription)); stderr: \(process.stderr)")
        }
        return FeedServer(baseURL: URL(string: "http://127.0.0.1:\(port)")!, directory: directory, process: process)
    }

    deinit { stop() }

    /// python3: the system one when there is one (it starts faster than a version manager's
    /// shim), else whatever `python3` the PATH names.
    private static let python3: (String, [String]) = {
        for path in ["/usr/bin/python3", "/usr/local/bin/python3", "/opt/homebrew/bin/python3"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return (path, [])
        }
        return ("/usr/bin/env", ["python3"])
    }()

    /// Ends the server (its stdin closes; SIGKILL if it still runs) and removes its directory.
    func stop() {
        process.closeInput()
        process.send(SIGKILL)
        directory.remove()
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
    /// waiting up to `timeout` for that response to end (it returns as soon as it has; the
    /// bound is wide for a loaded machine, where a paced response takes a while to see its
    /// client gone).
    func bigBytesSent(timeout: Duration = .seconds(60)) async throws -> Int? {
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
