import Foundation
import Testing
@testable import Store

/// The bearer token goes to the first page's origin (scheme, host, port) only: never to a page
/// whose `next` names another origin, nor to any image download.
@Suite(.timeLimit(.minutes(1)))
struct FeedTokenOriginTests {
    static let token = "s3cr3t-token-for-origin-tests"

    /// Page 1 and page 3 on server A, page 2 and an image on server B (another port of
    /// 127.0.0.1: another origin), and an image on A: only A's pages get the token.
    @Test func tokenGoesToTheFirstPagesOriginOnly() async throws {
        let a = try await HeaderRecordingServer.start()
        defer { a.stop() }
        let b = try await HeaderRecordingServer.start()
        defer { b.stop() }
        try a.publish("feed.json", behaviourFeed(
            frameworks: [KindFixture.framework.json("f1", 1)], next: b.url("/feed-2.json").absoluteString))
        try b.publish("feed-2.json", behaviourFeed(
            frameworks: [KindFixture.framework.json("f2", 1)],
            images: [imageJSON(b.url("/img/b.png").absoluteString), imageJSON(a.url("/img/a.png").absoluteString)],
            next: a.url("/feed-3.json").absoluteString))
        try a.publish("feed-3.json", behaviourFeed(frameworks: [KindFixture.framework.json("f3", 1)]))
        try a.publish("img/a.png", Data("A".utf8))
        try b.publish("img/b.png", Data("B".utf8))

        try await withBehaviourStore { store, _ in
            var options = SyncOptions()
            options.bearerToken = Self.token
            let report = try await store.sync(from: .remote(a.url("/feed.json")), options: options)
            #expect(report.frameworks.inserted == 3)
            #expect(report.images.downloaded == 2)
        }

        let seenByA = try await a.requests()
        let seenByB = try await b.requests()
        #expect(seenByA.filter { $0.path == "/feed.json" }.map(\.authorization) == ["Bearer \(Self.token)"])
        #expect(seenByA.filter { $0.path == "/feed-3.json" }.map(\.authorization) == ["Bearer \(Self.token)"])
        #expect(seenByB.filter { $0.path == "/feed-2.json" }.map(\.authorization) == [nil])
        // Images never carry it, on either origin.
        #expect(seenByA.filter { $0.path == "/img/a.png" }.map(\.authorization) == [nil])
        #expect(seenByB.filter { $0.path == "/img/b.png" }.map(\.authorization) == [nil])
        #expect(seenByB.allSatisfy { $0.authorization == nil })
    }

    /// "localhost" and "127.0.0.1" reach the same socket but are two origins: the token named for
    /// one is not sent to the other.
    @Test func sameServerUnderAnotherHostNameIsAnotherOrigin() async throws {
        let a = try await HeaderRecordingServer.start()
        defer { a.stop() }
        let port = try #require(a.baseURL.port)
        try a.publish("feed.json", behaviourFeed(next: "http://localhost:\(port)/feed-2.json"))
        try a.publish("feed-2.json", behaviourFeed(frameworks: [KindFixture.framework.json("f2", 1)]))

        try await withBehaviourStore { store, _ in
            var options = SyncOptions()
            options.bearerToken = Self.token
            _ = try await store.sync(from: .remote(a.url("/feed.json")), options: options)
        }

        let seen = try await a.requests()
        #expect(seen.filter { $0.path == "/feed.json" }.map(\.authorization) == ["Bearer \(Self.token)"])
        #expect(seen.filter { $0.path == "/feed-2.json" }.map(\.authorization) == [nil])
    }
}

/// A static file server on 127.0.0.1 (python3's http.server) that records every request's path
/// and Authorization header; `GET /_requests` answers them as JSON.
final class HeaderRecordingServer: Sendable {
    struct Request: Decodable, Equatable {
        let path: String
        let authorization: String?
    }

    let baseURL: URL
    let root: URL
    private let server: ScriptProcess
    private let folder: TemporaryDirectory

    static let script = #"""
        import http.server, json, os, sys, threading
        root = sys.argv[1]
        seen = []
        lock = threading.Lock()
        class Handler(http.server.SimpleHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=root, **kwargs)
            def log_message(self, *args):
                pass
            def do_GET(self):
                if self.path == "/_requests":
                    with lock:
                        body = json.dumps(seen).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                with lock:
                    seen.append({"path": self.path, "authorization": self.headers.get("Authorization")})
                super().do_GET()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        threading.Timer(120, lambda: os._exit(0)).start()
        server.serve_forever()
        """#

    private init(folder: TemporaryDirectory, server: ScriptProcess, port: Int) {
        self.folder = folder
        root = folder.url
        self.server = server
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Starts a server (through the one process runner) and returns once it listens.
    static func start() async throws -> HeaderRecordingServer {
        let folder = try TemporaryDirectory(prefix: "recording-server")
        let server = try await ScriptProcess.start(python: script, [folder.path])
        guard let port = server.port else {
            server.stop()
            throw FeedServer.StartError(description: "the recording server did not print a port")
        }
        return HeaderRecordingServer(folder: folder, server: server, port: port)
    }

    func url(_ path: String) -> URL { URL(string: baseURL.absoluteString + path)! }

    func publish(_ name: String, _ text: String) throws { try publish(name, Data(text.utf8)) }

    func publish(_ name: String, _ data: Data) throws {
        let file = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
    }

    func requests() async throws -> [Request] {
        let response = try await HTTPTransport.live.send(HTTPRequest(url: url("/_requests"), timeout: .seconds(5)))
        return try JSONDecoder().decode([Request].self, from: response.body)
    }

    func stop() {
        server.stop()
        folder.remove()
    }
}
