import Foundation

/// One HTTP GET as the sync engine asks for it.
public struct HTTPRequest: Sendable, Equatable {
    /// The http(s) URL to GET.
    public var url: URL
    /// Extra request headers (If-None-Match, If-Modified-Since, Authorization, ...).
    public var headers: [String: String]
    /// Longest wait for the response to start or for the next bytes of the body.
    public var timeout: Duration
    /// A success's (2xx) body is refused, while it is being read, once it exceeds this many
    /// bytes. An error status's body is cut there instead, and the status returned: a 404 page
    /// larger than the file asked for is still a 404.
    public var maximumBytes: Int
    /// Redirects followed at most; a redirect from https to http, or to any scheme other than
    /// http and https, is always refused.
    public var maximumRedirects: Int
    /// When set, the transport writes the body to this file (created, or emptied, for each
    /// response) as it arrives, instead of into `HTTPResponse.body`: a feed page is spooled to
    /// disk, never held in memory. A transport that fills `body` anyway is still understood
    /// (the sync writes that body to the file itself).
    public var bodyFile: URL?

    /// A GET of `url` with these limits.
    public init(
        url: URL, headers: [String: String] = [:], timeout: Duration = .seconds(30),
        maximumBytes: Int = 256 * 1024 * 1024, maximumRedirects: Int = 5, bodyFile: URL? = nil
    ) {
        self.url = url
        self.headers = headers
        self.timeout = timeout
        self.maximumBytes = maximumBytes
        self.maximumRedirects = maximumRedirects
        self.bodyFile = bodyFile
    }
}

/// A complete HTTP response.
public struct HTTPResponse: Sendable, Equatable {
    /// The URL that answered, after redirects.
    public var url: URL
    /// The HTTP status code (200, 304, ...).
    public var status: Int
    /// Header names in lowercase.
    public var headers: [String: String]
    /// The whole body, at most the request's `maximumBytes`.
    public var body: Data

    /// A response; header names are lowercased (the first of two that differ only in case wins).
    public init(url: URL, status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.url = url
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }
}

/// The HTTP dependency: how the store sends one request. `live` uses URLSession
/// (FoundationNetworking on Linux); tests substitute their own values.
///
/// A transport performs exactly one exchange (following redirects under the request's rules):
/// it does not retry; `HTTPFetcher` does.
public struct HTTPTransport: Sendable {
    /// Performs one exchange for the request. Throws ``HTTPError`` for a failure of the
    /// exchange (connection, timeout, size, redirect); a non-2xx status is a response, not an
    /// error.
    public var send: @Sendable (HTTPRequest) async throws -> HTTPResponse

    /// A transport that sends requests with `send`.
    public init(send: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        self.send = send
    }

    /// A transport that fails the test loudly: for code paths that must not touch the network.
    package static let unimplemented = HTTPTransport { request in
        throw HTTPError.connectionFailed(url: request.url, reason: "no HTTP transport is configured for this test")
    }
}

/// Why an HTTP exchange failed. Descriptions name the URL without its user and password; none
/// ever includes a header value (the bearer token must never be printed).
public enum HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection, reset, DNS failure, ...: retried.
    case connectionFailed(url: URL, reason: String)
    /// No response or no new bytes within the timeout: retried.
    case timedOut(url: URL, after: Duration)
    /// The body ended before its Content-Length: retried.
    case truncated(url: URL, expected: Int, received: Int)
    /// The body exceeded the size cap; reading stopped there. Not retried.
    case tooLarge(url: URL, limit: Int)
    /// More redirects than allowed (or a loop). Not retried.
    case tooManyRedirects(url: URL, limit: Int)
    /// A redirect that is never followed: https to http, or to a non-http(s) scheme. Not retried.
    case redirectRefused(from: URL, to: URL, reason: String)
    /// A final status that is not success after any retries (4xx, or 5xx/429 after the last attempt).
    case status(url: URL, code: Int)
    /// An image download got an answer that is not a whole image: a status other than 200 or
    /// 203 (a 206 with part of it, a 204), an empty body, or a Content-Type that is neither
    /// `image/*` nor `application/octet-stream` nor `binary/octet-stream` (a `200 text/html`
    /// soft 404). Nothing is cached, so the next load or sync tries again. Not retried.
    case notAnImage(url: URL, reason: String)
    /// The body came in more pieces than the transport takes (`pieces`, averaging under 1 KiB:
    /// a chunked body of tiny chunks), which URLSession on Linux holds about 450 bytes each
    /// until the exchange ends. Reading stopped there. Not retried.
    case tooFragmented(url: URL, pieces: Int)
    /// The body could not be written to `path`, the request's `bodyFile` (a full disk or
    /// TMPDIR, a folder removed): this machine's problem, not the server's. Not retried.
    case cannotWriteBody(url: URL, path: String, reason: String)
    /// `HTTPFetcher` stopped retrying a transient failure (the last one, after this many
    /// attempts): the policy's attempts were made, or the request's `timeout` was reached.
    indirect case gaveUp(HTTPError, attempts: Int, timeout: Duration)

    /// Whether another attempt may succeed.
    public var isTransient: Bool {
        switch self {
        case .connectionFailed, .timedOut, .truncated: true
        case .status(_, let code): code == 429 || (500...599).contains(code)
        case .tooLarge, .tooFragmented, .tooManyRedirects, .redirectRefused, .notAnImage, .cannotWriteBody, .gaveUp: false
        }
    }

    public var description: String {
        switch self {
        case .connectionFailed(let url, let reason): "\(url.redacted): cannot connect: \(reason)"
        case .timedOut(let url, let after): "\(url.redacted): timed out after \(Self.seconds(after))"
        case .truncated(let url, let expected, let received):
            "\(url.redacted): the body was cut short (\(received) of \(expected) bytes)"
        case .tooLarge(let url, let limit):
            "\(url.redacted): the body is larger than the limit of \(limit) byte\(limit == 1 ? "" : "s")"
        case .tooFragmented(let url, let pieces):
            "\(url.redacted): the body came in more than \(pieces) pieces averaging under 1 KiB (tiny chunks); "
                + "serve it in larger chunks, or with a Content-Length"
        case .tooManyRedirects(let url, let limit): "\(url.redacted): more than \(limit) redirects"
        case .redirectRefused(let from, let to, let reason):
            "\(from.redacted): refused to follow the redirect to \(to.redacted): \(reason)"
        case .status(let url, let code): "\(url.redacted): HTTP \(code)"
        case .notAnImage(let url, let reason): "\(url.redacted): not an image: \(reason)"
        case .cannotWriteBody(let url, let path, let reason):
            "\(url.redacted): cannot write the download to \(path) (TMPDIR): \(reason)"
        case .gaveUp(let last, let attempts, let timeout):
            // A timeout is the request's, whatever time its last attempt had left; or, past it,
            // the bound on the whole exchange (ten times it: a server sending a byte now and then).
            if case .timedOut(let url, let after) = last {
                "\(HTTPError.timedOut(url: url, after: max(after, timeout))), \(attempts) attempt\(attempts == 1 ? "" : "s")"
            } else {
                "\(last), \(attempts) attempt\(attempts == 1 ? "" : "s")"
            }
        }
    }

    /// The failure itself, without the retries around it.
    public var underlying: HTTPError {
        if case .gaveUp(let last, _, _) = self { last.underlying } else { self }
    }

    /// "2 s", "1.5 s", "0.25 s".
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        if attoseconds == 0 { return "\(seconds) s" }
        let value = Double(seconds) + Double(attoseconds) / 1e18
        var text = String(format: "%.3f", value)
        while text.hasSuffix("0") { text.removeLast() }
        return text + " s"
    }
}
