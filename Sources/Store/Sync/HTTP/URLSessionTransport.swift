import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension HTTPTransport {
    /// URLSession (FoundationNetworking on Linux). One GET per call, with its own ephemeral
    /// session: no cache, no cookies, nothing shared between calls.
    ///
    /// - `request.timeout` is the idle timeout: the longest wait for the response to start or
    ///   for the next bytes of the body (→ `HTTPError.timedOut`).
    /// - The whole exchange (redirects, headers and body) is bounded too, by ten times
    ///   `request.timeout`, so a body that keeps dribbling cannot hold the sync forever.
    /// - `request.maximumBytes` caps a success's body as handed over (decoded, for a gzip body):
    ///   up front by Content-Length when the body is not encoded, and always while reading. An
    ///   error status's body is cut at it and the status returned.
    /// - Redirects follow `request.maximumRedirects` and `RedirectRule`; Authorization and
    ///   Cookie are dropped on a redirect to another origin.
    public static let live: HTTPTransport = urlSession()

    /// `live` with another bound on the whole exchange; `nil` means ten times `request.timeout`.
    /// A timeout beyond a year counts as a year (ten times `Duration.seconds(Int64.max)` would
    /// overflow, and Foundation's intervals lose it long before).
    public static func urlSession(exchangeTimeout: Duration? = nil) -> HTTPTransport {
        urlSession(exchangeTimeout: exchangeTimeout, piecesAllowedAnyway: URLSessionExchange.piecesAllowedAnyway)
    }

    /// The same, a body of tiny pieces refused past `piecesAllowedAnyway` of them (a test's is
    /// small; see `URLSessionExchange.piecesAllowedAnyway`).
    static func urlSession(exchangeTimeout: Duration?, piecesAllowedAnyway: Int) -> HTTPTransport {
        HTTPTransport { request in
            var request = request
            request.timeout = min(request.timeout, longestTimeout)
            return try await URLSessionExchange.run(
                request, exchangeTimeout: min(exchangeTimeout ?? request.timeout * 10, longestTimeout * 10),
                piecesAllowedAnyway: piecesAllowedAnyway)
        }
    }

    /// The longest timeout a request is given: a year.
    static let longestTimeout: Duration = .seconds(365 * 86_400)
}

/// One request in flight: the URLSession delegate that accumulates the body, enforces the
/// limits and redirect rules, and resumes the caller exactly once.
final class URLSessionExchange: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // Why @unchecked Sendable is safe: the only mutable stored property is `state`, and it is
    // read and written only while `lock` is held (every access goes through `withState`).
    // Everything else is a `let` of a Sendable type. Resuming the caller, cancelling the task
    // and invalidating the session happen after the lock is released, on values taken out of
    // `state` under it. The two calls made with the lock held (`task.resume()` and a redirect's
    // completion handler) only queue work on URLSession's own queues; URLSession calls this
    // delegate asynchronously on `delegateQueue`, so nothing re-enters the lock.
    private let request: HTTPRequest
    private let exchangeTimeout: Duration
    private let piecesAllowedAnyway: Int
    private let lock = NSLock()
    private var state: State

    private struct State {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var session: URLSession?
        var task: URLSessionDataTask?
        var watchdog: Task<Void, Never>?
        /// Set once the outcome is decided; every later event is ignored.
        var finished = false
        /// An outcome decided before `start` ran (cancellation races the start).
        var earlyFailure: (any Error)?
        /// The last URL the exchange approved: the request's, then each followed redirect's.
        var currentURL: URL
        var redirects = 0
        var response: HTTPURLResponse?
        /// The body so far, when it is not written to `request.bodyFile`.
        var body = Data()
        /// Body bytes received (in `body` or in the file).
        var received = 0
        /// The pieces they came in (one per `didReceive data`).
        var pieces = 0
        /// The open `request.bodyFile`, from the response on.
        var file: FileHandle?
        var started: ContinuousClock.Instant
        var lastActivity: ContinuousClock.Instant
    }

    static func run(_ request: HTTPRequest, exchangeTimeout: Duration, piecesAllowedAnyway: Int) async throws
        -> HTTPResponse
    {
        let scheme = request.url.scheme?.lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw HTTPError.connectionFailed(url: request.url, reason: "only http and https URLs are supported")
        }
        let exchange = URLSessionExchange(
            request: request, exchangeTimeout: exchangeTimeout, piecesAllowedAnyway: piecesAllowedAnyway)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                exchange.start(continuation)
            }
        } onCancel: {
            exchange.finish(.failure(CancellationError()))
        }
    }

    private init(request: HTTPRequest, exchangeTimeout: Duration, piecesAllowedAnyway: Int) {
        self.request = request
        self.exchangeTimeout = exchangeTimeout
        self.piecesAllowedAnyway = piecesAllowedAnyway
        let now = ContinuousClock.now
        self.state = State(currentURL: request.url, started: now, lastActivity: now)
    }

    private func withState<T>(_ body: (inout State) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    // MARK: Lifecycle

    private func start(_ continuation: CheckedContinuation<HTTPResponse, any Error>) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = request.timeout.timeInterval
        // A second later than the watchdog below, which reports the exchange bound precisely;
        // URLSession's own limit is the backstop.
        configuration.timeoutIntervalForResource = exchangeTimeout.timeInterval + 1
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "store.http.exchange"

        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData,
            timeoutInterval: request.timeout.timeInterval)
        urlRequest.httpMethod = "GET"
        // The library and its version (what `storectl --version` prints); a request may set its own.
        urlRequest.setValue(Store.userAgent, forHTTPHeaderField: "User-Agent")
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }

        // The session keeps its delegate (self) alive until it is invalidated in `finish`.
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
        let task = session.dataTask(with: urlRequest)
        let watchdog = Task { [self] in await watch() }
        // Resumed under the lock, so that no cancellation can reach the task before it runs.
        let earlyFailure: (any Error)? = withState { state in
            if state.finished { return state.earlyFailure ?? CancellationError() }
            state.continuation = continuation
            state.session = session
            state.task = task
            state.watchdog = watchdog
            let now = ContinuousClock.now
            state.started = now
            state.lastActivity = now
            task.resume()
            return nil
        }
        if let earlyFailure {
            // Never resumed, so no redirect can be pending: cancelling is safe here.
            watchdog.cancel()
            session.invalidateAndCancel()
            continuation.resume(throwing: earlyFailure)
        }
    }

    /// What `settle` takes out of the state: the things to release once the lock is let go.
    private struct Settled {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var session: URLSession?
        var task: URLSessionDataTask?
        var watchdog: Task<Void, Never>?
    }

    /// Marks the outcome decided (call with the lock held); nil when it already was.
    private static func settle(_ state: inout State, _ result: Result<HTTPResponse, any Error>) -> Settled? {
        guard !state.finished else { return nil }
        state.finished = true
        if state.continuation == nil, case .failure(let error) = result {
            state.earlyFailure = error
        }
        let settled = Settled(
            continuation: state.continuation, session: state.session, task: state.task,
            watchdog: state.watchdog)
        state.continuation = nil
        state.session = nil
        state.task = nil
        state.watchdog = nil
        state.body = Data()
        try? state.file?.close()
        state.file = nil
        return settled
    }

    /// Resumes the caller and releases the transfer (call without the lock). `cancelTask` is
    /// false when the task has ended or is ending by itself.
    private func release(_ settled: Settled?, _ result: Result<HTTPResponse, any Error>, cancelTask: Bool) {
        guard let settled else { return }
        settled.continuation?.resume(with: result)
        settled.watchdog?.cancel()
        if cancelTask { settled.task?.cancel() }
        // Not invalidateAndCancel: that would cancel the task a second time. The session lets
        // go of its delegate (self) once the task is over.
        settled.session?.finishTasksAndInvalidate()
    }

    /// Decides the outcome once: resumes the caller, stops the transfer, frees the session.
    private func finish(_ result: Result<HTTPResponse, any Error>, cancelTask: Bool = true) {
        let settled = withState { Self.settle(&$0, result) }
        release(settled, result, cancelTask: cancelTask)
    }

    private func fail(_ error: HTTPError, cancelTask: Bool = true) {
        finish(.failure(error), cancelTask: cancelTask)
    }

    /// Enforces both timeouts independently of the platform's timers: the idle timeout
    /// (`request.timeout` since the last response or body bytes) and the exchange bound.
    private func watch() async {
        let clock = ContinuousClock()
        while true {
            let next: (deadline: ContinuousClock.Instant, after: Duration, url: URL)? = withState { state in
                guard !state.finished else { return nil }
                let idle = state.lastActivity + request.timeout
                let whole = state.started + exchangeTimeout
                return idle <= whole
                    ? (idle, request.timeout, state.currentURL)
                    : (whole, exchangeTimeout, state.currentURL)
            }
            guard let next else { return }
            if clock.now >= next.deadline {
                fail(.timedOut(url: next.url, after: next.after))
                return
            }
            do {
                try await Task.sleep(until: next.deadline, clock: clock)
            } catch {
                return // cancelled: the exchange finished
            }
        }
    }

    // MARK: URLSessionDataDelegate

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        guard let http = response as? HTTPURLResponse else {
            fail(.connectionFailed(url: request.url, reason: "the response is not an HTTP response"))
            completionHandler(.cancel)
            return
        }
        let approved = withState { state -> URL? in
            guard !state.finished else { return nil }
            state.response = http
            state.lastActivity = .now
            return state.currentURL
        }
        if let bodyFile = request.bodyFile {
            // Created (or emptied) for this response: the body is written there as it arrives.
            let failure = withState { state -> String? in
                try? state.file?.close()
                state.file = nil
                state.received = 0
                let descriptor = open(bodyFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
                guard descriptor >= 0 else { return String(cString: strerror(errno)) }
                state.file = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
                return nil
            }
            if let failure {
                fail(.cannotWriteBody(url: request.url, path: bodyFile.path, reason: failure))
                completionHandler(.cancel)
                return
            }
        }
        guard let approved else {
            completionHandler(.cancel)
            return
        }
        // Belt and braces: should the platform have followed a redirect without asking
        // `willPerformHTTPRedirection`, the URL that answered must still pass the rules.
        if let answered = http.url, answered != approved {
            do throws(HTTPError) {
                try RedirectRule.check(from: approved, to: answered)
            } catch {
                fail(error)
                completionHandler(.cancel)
                return
            }
        }
        // Up front only for an identity body: an encoded one's Content-Length is its encoded
        // size, larger than the decoded bytes for a small gzip file (nginx's gzip_static sends
        // one), and the decoded bytes are what the limit caps, as they arrive (a gzip bomb too).
        // Only a success's body is what the caller reads: an error status's body (an error page
        // larger than a small published file's cap) is cut at the limit below, and the status
        // answered, so a 404 reads as missing and a 503 is retried.
        if Self.isSuccess(http), Self.isIdentityEncoded(http), http.expectedContentLength > Int64(request.maximumBytes) {
            fail(.tooLarge(url: http.url ?? approved, limit: request.maximumBytes))
            completionHandler(.cancel)
            return
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        var errorStatus: HTTPResponse?
        var fragmented: URL?
        let tooLarge = withState { state -> (URL, String?)? in
            guard !state.finished else { return nil }
            state.lastActivity = .now
            guard state.received + data.count <= request.maximumBytes else {
                // An error status's body past the limit: the status is the answer (its body is
                // never what the caller reads), not "too large", which hid a 404 or a 503 behind
                // its error page whenever that page outgrew the file asked for.
                if let response = state.response, !Self.isSuccess(response) {
                    errorStatus = HTTPResponse(
                        url: response.url ?? state.currentURL, status: response.statusCode,
                        headers: Self.headers(of: response), body: state.body)
                    return nil
                }
                return (state.response?.url ?? state.currentURL, nil)
            }
            state.received += data.count
            state.pieces += 1
            if Self.isTooFragmented(pieces: state.pieces, received: state.received, allowedAnyway: piecesAllowedAnyway) {
                fragmented = state.response?.url ?? state.currentURL
                return nil
            }
            if let file = state.file {
                do {
                    try file.write(contentsOf: data)
                } catch {
                    return (state.response?.url ?? state.currentURL, SystemErrorText.reason(error))
                }
            } else {
                state.body.append(data)
            }
            return nil
        }
        if let errorStatus {
            finish(.success(errorStatus))
            return
        }
        if let fragmented {
            fail(.tooFragmented(url: fragmented, pieces: piecesAllowedAnyway))
            return
        }
        if let (url, writeFailure) = tooLarge {
            if let writeFailure {
                fail(.cannotWriteBody(url: url, path: request.bodyFile?.path ?? "disk", reason: "\(writeFailure)"))
            } else {
                fail(.tooLarge(url: url, limit: request.maximumBytes))
            }
        }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // The completion handler is called while the lock is held, and never once the outcome
        // is decided. Reason: deciding the outcome cancels the task, and FoundationNetworking
        // traps ("Received callback for HTTP redirection, but we're not waiting for it") when a
        // redirect handler is answered after its task was cancelled. Under the lock, either the
        // answer is queued before any cancellation, or the task is cancelled and the handler is
        // left unanswered (the cancelled task needs no answer, on any platform).
        let refused = withState { state -> (settled: Settled?, error: HTTPError)? in
            guard !state.finished else { return nil }
            state.lastActivity = .now
            let from = response.url ?? state.currentURL
            let decision: HTTPError?
            if let target = newRequest.url {
                state.redirects += 1
                if state.redirects > request.maximumRedirects {
                    decision = .tooManyRedirects(url: request.url, limit: request.maximumRedirects)
                } else {
                    // The Location header is checked as well as the URL URLSession proposes:
                    // FoundationNetworking turns "Location: file:///etc/passwd" into a request
                    // for /etc/passwd on the same http origin, which would pass the rules.
                    let location = Self.header("location", of: response)
                        .flatMap { URL(string: $0, relativeTo: from)?.absoluteURL }
                    decision =
                        [location, target].lazy.compactMap { $0 }.compactMap { to in
                            RedirectRule.refusal(from: from, to: to).map {
                                HTTPError.redirectRefused(from: from, to: to, reason: $0)
                            }
                        }.first
                }
                if decision == nil {
                    state.currentURL = target
                    var next = newRequest
                    if !RedirectRule.isSameOrigin(from, target) {
                        // The bearer token is for the origin the caller named, not for
                        // wherever that origin points.
                        next.setValue(nil, forHTTPHeaderField: "Authorization")
                        next.setValue(nil, forHTTPHeaderField: "Cookie")
                    }
                    completionHandler(next)
                    return nil
                }
            } else {
                decision = .connectionFailed(url: from, reason: "a redirect without a target URL")
            }
            // Not followed: the redirect response becomes the task's last, so the task ends by
            // itself and is not cancelled.
            completionHandler(nil)
            let error = decision!
            return (Self.settle(&state, .failure(error)), error)
        }
        if let refused {
            release(refused.settled, .failure(refused.error), cancelTask: false)
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let snapshot = withState { state -> (response: HTTPURLResponse?, body: Data, received: Int, url: URL)? in
            guard !state.finished else { return nil }
            return (state.response, state.body, state.received, state.currentURL)
        }
        guard let snapshot else { return }
        let url = snapshot.response?.url ?? snapshot.url
        let expected = snapshot.response.flatMap(Self.expectedBodyLength)

        if let error {
            if let expected, snapshot.received < expected, !Self.isTimeout(error), !Self.isCancellation(error) {
                // The connection ended inside the body (libcurl reports it as a lost connection
                // or a partial file, Apple platforms as a lost connection).
                fail(.truncated(url: url, expected: expected, received: snapshot.received), cancelTask: false)
            } else {
                fail(map(error, url: url), cancelTask: false)
            }
            return
        }
        guard let response = snapshot.response else {
            fail(.connectionFailed(url: url, reason: "the exchange ended without a response"), cancelTask: false)
            return
        }
        if let expected, snapshot.received < expected {
            fail(.truncated(url: url, expected: expected, received: snapshot.received), cancelTask: false)
            return
        }
        let headers = Self.headers(of: response)
        // A redirect URLSession did not offer to follow (FoundationNetworking does not offer one
        // to a scheme it cannot load, such as file:) is still a redirect the rules refuse.
        if [301, 302, 303, 307, 308].contains(response.statusCode), let location = headers["location"],
            let target = URL(string: location, relativeTo: url)?.absoluteURL,
            let reason = RedirectRule.refusal(from: url, to: target)
        {
            fail(.redirectRefused(from: url, to: target, reason: reason), cancelTask: false)
            return
        }
        finish(
            .success(HTTPResponse(url: url, status: response.statusCode, headers: headers, body: snapshot.body)),
            cancelTask: false)
    }

    // MARK: Pieces

    /// FoundationNetworking (Linux) makes a new dispatch timer for each piece of body libcurl
    /// hands over, to restart the request's timeout, and they are not freed while the transfer
    /// runs: about 450 bytes a piece. libcurl hands over each chunk of a chunked body as a
    /// piece, and a chunk of one byte takes six on the wire: a server sending a 1 MB body in
    /// 1-byte chunks took 460 MB and 16 s (debug storectl), 4 MB 1.8 GB; the body cap (256 MiB by
    /// default) allowed about 115 GB. So a body may come in up to `piecesAllowedAnyway` pieces,
    /// and past that only if they average at least `leastAveragePiece` bytes (timers of less
    /// than half the body's size). libcurl runs ahead of this delegate, so more pieces than
    /// counted are made before the refusal stops it: refused at 32,768, such a sync peaked at
    /// 55 to 106 MB; at 131,072, 150 to 330 MB. Chunks of 4 KiB or more, or a body read as it
    /// arrives over TCP (segments of about 1.4 KB), are far from it; a server that flushes each
    /// small write (a record) as a chunk is refused past 32,768 of them.
    static let piecesAllowedAnyway = 32_768
    static let leastAveragePiece = 1_024

    /// Whether pieces are counted: on Linux only, since URLSession on Apple platforms keeps no
    /// timer per piece.
    #if canImport(FoundationNetworking)
        static let boundsPieces = true
    #else
        static let boundsPieces = false
    #endif

    /// Whether a body of `received` bytes that came in `pieces` pieces is refused.
    static func isTooFragmented(pieces: Int, received: Int, allowedAnyway: Int = piecesAllowedAnyway) -> Bool {
        boundsPieces && pieces > allowedAnyway && pieces > received / leastAveragePiece
    }

    // MARK: Errors

    /// The body length Content-Length promises, when the received bytes can be compared with it:
    /// not for responses without a body, nor for encoded bodies (URLSession hands over the
    /// decoded bytes, whose count differs from the encoded length).
    private static func expectedBodyLength(_ response: HTTPURLResponse) -> Int? {
        let status = response.statusCode
        guard response.expectedContentLength >= 0, !(100..<200).contains(status), status != 204, status != 304
        else { return nil }
        guard isIdentityEncoded(response) else { return nil }
        return Int(exactly: response.expectedContentLength)
    }

    /// Whether the body comes as sent, so Content-Length counts the bytes handed over: no
    /// Content-Encoding, or `identity`.
    private static func isIdentityEncoded(_ response: HTTPURLResponse) -> Bool {
        guard let encoding = header("content-encoding", of: response) else { return true }
        return encoding.trimmingCharacters(in: .whitespaces).lowercased() == "identity"
    }

    /// Whether the status is a success (2xx), whose body the caller reads and the limit caps.
    private static func isSuccess(_ response: HTTPURLResponse) -> Bool {
        (200..<300).contains(response.statusCode)
    }

    /// The response's headers, names lowercased.
    private static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            headers[String(describing: name).lowercased()] = String(describing: value)
        }
        return headers
    }

    /// A response header by case-insensitive name.
    private static func header(_ name: String, of response: HTTPURLResponse) -> String? {
        response.allHeaderFields.first { String(describing: $0.key).lowercased() == name }
            .map { String(describing: $0.value) }
    }

    private static func urlErrorCode(_ error: any Error) -> Int? {
        let error = error as NSError
        return error.domain == NSURLErrorDomain ? error.code : nil
    }

    private static func isTimeout(_ error: any Error) -> Bool {
        urlErrorCode(error) == NSURLErrorTimedOut
    }

    private static func isCancellation(_ error: any Error) -> Bool {
        urlErrorCode(error) == NSURLErrorCancelled
    }

    /// Maps a URLSession error to an HTTPError. The reason names the error, never a header.
    private func map(_ error: any Error, url: URL) -> HTTPError {
        guard let code = Self.urlErrorCode(error) else {
            return .connectionFailed(url: url, reason: String(describing: type(of: error)))
        }
        let reason: String
        switch code {
        case NSURLErrorTimedOut:
            return .timedOut(url: url, after: request.timeout)
        case NSURLErrorHTTPTooManyRedirects, NSURLErrorRedirectToNonExistentLocation:
            return .tooManyRedirects(url: request.url, limit: request.maximumRedirects)
        case NSURLErrorCancelled: reason = "the request was cancelled"
        case NSURLErrorCannotConnectToHost: reason = "connection refused"
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: reason = "host not found"
        case NSURLErrorNetworkConnectionLost: reason = "the connection was lost"
        case NSURLErrorNotConnectedToInternet: reason = "not connected to the network"
        case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted,
            NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateHasUnknownRoot,
            NSURLErrorServerCertificateNotYetValid, NSURLErrorClientCertificateRejected:
            reason = "TLS failed"
        case NSURLErrorBadServerResponse: reason = "bad server response"
        case NSURLErrorUnsupportedURL: reason = "unsupported URL"
        default: reason = "network error"
        }
        return .connectionFailed(url: url, reason: "\(reason) (URL error \(code))")
    }
}

extension Duration {
    /// Seconds as a TimeInterval, for Foundation APIs.
    fileprivate var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
