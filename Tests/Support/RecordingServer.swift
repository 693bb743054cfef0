import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// python3's http.server on 127.0.0.1 serving a temporary folder (Last-Modified, and 304 for
/// If-Modified-Since), recording each request's path, Authorization header and whether it was
/// conditional (`GET /_requests` answers them as JSON); `GET /stall` sends nothing for 600 s
/// (far past any bound a test sets on a client that must not wait for it);
/// `GET /reply/<status>?type=T&body=B` answers that status with body B (none for 204) and
/// Content-Type T (no Content-Type without `type`); `GET /gzip/<name>` serves the file
/// gzip-encoded (stored blocks: the encoded body is larger than the file) with
/// `Content-Encoding: gzip` and the encoded Content-Length, as nginx's gzip_static does, and
/// relative names resolve under /gzip/ too; `GET /gzip-bomb?bytes=N` is N zero bytes gzipped
/// (a few KiB on the wire).
/// Started through the one process runner; stopped by `stop()` or when its stdin closes.
public final class RecordingServer: Sendable {
    public struct Request: Decodable, Equatable, Sendable {
        public let path: String
        public let authorization: String?
        public let conditional: Bool
    }

    public let baseURL: URL
    /// The folder it serves.
    public let root: URL
    private let server: ScriptProcess
    private let folder: TemporaryDirectory

    static let script = #"""
        import gzip, http.server, json, os, sys, threading, time, urllib.parse
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
                    seen.append({"path": self.path, "authorization": self.headers.get("Authorization"),
                                 "conditional": "If-Modified-Since" in self.headers or "If-None-Match" in self.headers})
                if self.path == "/stall":
                    time.sleep(600)
                    self.close_connection = True
                    return
                if self.path.startswith("/gzip/") or self.path.startswith("/gzip-bomb?"):
                    url = urllib.parse.urlsplit(self.path)
                    if url.path == "/gzip-bomb":
                        size = int(urllib.parse.parse_qs(url.query)["bytes"][0])
                        body = gzip.compress(b"\0" * size, compresslevel=9)
                    else:
                        file = os.path.realpath(os.path.join(root, urllib.parse.unquote(url.path[len("/gzip/"):])))
                        if not file.startswith(os.path.realpath(root) + os.sep) or not os.path.isfile(file):
                            self.send_error(404)
                            return
                        with open(file, "rb") as f:
                            body = gzip.compress(f.read(), compresslevel=0)
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Encoding", "gzip")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                if self.path.startswith("/reply/"):
                    url = urllib.parse.urlsplit(self.path)
                    query = urllib.parse.parse_qs(url.query)
                    status = int(url.path[len("/reply/"):])
                    body = b"" if status == 204 else query.get("body", [""])[0].encode()
                    self.send_response(status)
                    if "type" in query:
                        self.send_header("Content-Type", query["type"][0])
                    if status != 204:
                        self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                super().do_GET()
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        print(server.server_address[1], flush=True)
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        # A backstop only (stdin closing or stop() ends it first): past the stall, so that a
        # client that waits for /stall is not let go by the server's end.
        threading.Timer(900, lambda: os._exit(0)).start()
        server.serve_forever()
        """#

    private init(folder: TemporaryDirectory, server: ScriptProcess, port: Int) {
        self.folder = folder
        root = folder.url
        self.server = server
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Starts a server and returns once it listens.
    public static func start() async throws -> RecordingServer {
        let folder = try TemporaryDirectory(prefix: "recording-server")
        let server = try await ScriptProcess.start(python: script, [folder.path])
        guard let port = server.port else {
            server.stop()
            throw ScriptProcess.StartFailed(stderr: "the recording server did not print a port")
        }
        return RecordingServer(folder: folder, server: server, port: port)
    }

    /// `baseURL` + `path`.
    public func url(_ path: String) -> URL { URL(string: baseURL.absoluteString + path)! }

    /// Writes `text` as `name` (folders created) under the served folder.
    public func publish(_ name: String, _ text: String) throws { try publish(name, Data(text.utf8)) }

    /// Writes `data` at `name`, modified two seconds ago: as a file published before the test's
    /// syncs, whose Last-Modified (this server's only validator) a client keeps. One modified in
    /// the second of the response is weak (RFC 9110, 8.8.2.2), and not kept.
    public func publish(_ name: String, _ data: Data) throws {
        let file = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-2)], ofItemAtPath: file.path)
    }

    /// The requests seen so far (the /_requests calls excluded).
    public func requests() async throws -> [Request] {
        let (data, _) = try await URLSession.shared.data(from: url("/_requests"))
        return try JSONDecoder().decode([Request].self, from: data)
    }

    public func stop() {
        server.stop()
        folder.remove()
    }
}
