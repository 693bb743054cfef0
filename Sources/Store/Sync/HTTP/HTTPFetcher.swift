import Foundation

/// How sync and image loads retry a failed HTTP request (connection failures, 5xx and 429).
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included (at least 1 is made).
    public var maximumAttempts: Int
    /// The backoff before the first retry; it doubles for each further retry.
    public var baseDelay: Duration
    /// The backoff never exceeds this.
    public var maximumDelay: Duration
    /// A server's Retry-After is honoured up to this long.
    public var maximumRetryAfter: Duration

    /// A policy of at most `maximumAttempts` attempts (1: no retry), waiting `baseDelay` doubled
    /// per retry, with jitter, up to `maximumDelay`; a server's Retry-After is honoured up to
    /// `maximumRetryAfter`.
    public init(
        maximumAttempts: Int = 4, baseDelay: Duration = .milliseconds(500),
        maximumDelay: Duration = .seconds(30), maximumRetryAfter: Duration = .seconds(60)
    ) {
        self.maximumAttempts = maximumAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// The wait before retry number `retry` (1 after the first failed attempt).
    ///
    /// Exponential with "equal jitter": the ceiling is `baseDelay × 2^(retry-1)`, capped by
    /// `maximumDelay`; the wait is half the ceiling plus `random` (in 0...1) times the other
    /// half. So it always grows on average, never drops below half the ceiling, and retries
    /// from many clients do not land together.
    package func backoff(beforeRetry retry: Int, random: Double) -> Duration {
        let exponent = min(max(retry - 1, 0), 32)
        let base = max(baseDelay, .zero)
        let cap = max(maximumDelay, .zero)
        let ceiling = min(base * (1 << exponent), cap)
        let fraction = random.isFinite ? min(max(random, 0), 1) : 0
        return ceiling / 2 + (ceiling / 2) * fraction
    }
}

/// Sends a request through a transport, retrying what may succeed on another attempt.
///
/// Retried: connection failures, timeouts, truncated bodies, 5xx and 429, with exponential
/// backoff and jitter (`RetryPolicy.backoff`) or, on 429 and 503, the server's Retry-After
/// (delta-seconds or HTTP-date), capped by `policy.maximumRetryAfter`. Not retried: other
/// statuses and the other transport errors. 2xx and 304 are returned; any other final status
/// throws `HTTPError.status`. Cancellation is checked before every attempt and every wait.
///
/// `request.timeout` bounds the whole request, not only one attempt: an attempt fails after that
/// long without bytes, a later attempt gets only the time left, and no wait or retry starts
/// past it. So a stalled server fails the request after about `request.timeout`, however many
/// attempts the policy allows. When retrying stops on a transient failure, the error is
/// `HTTPError.gaveUp`, which says how many attempts were made.
struct HTTPFetcher: Sendable {
    var transport: HTTPTransport
    var clock: StoreClock
    var policy: RetryPolicy
    /// The jitter source: a value in 0..<1 per retry. Injected so tests are deterministic.
    var random: @Sendable () -> Double

    init(
        transport: HTTPTransport = .live, clock: StoreClock = .live, policy: RetryPolicy = RetryPolicy(),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.transport = transport
        self.clock = clock
        self.policy = policy
        self.random = random
    }

    func fetch(_ request: HTTPRequest) async throws -> HTTPResponse {
        let attempts = max(policy.maximumAttempts, 1)
        // Time spent so far: the attempts as measured, plus the waits as asked of `clock` (which
        // tests replace with one that does not really sleep).
        var spent = Duration.zero
        var attempt = 1
        while true {
            try Task.checkCancellation()
            let failure: HTTPError
            var retryAfter: Duration?
            var attemptRequest = request
            attemptRequest.timeout = min(request.timeout, max(request.timeout - spent, .zero))
            let started = ContinuousClock.now
            do {
                let response = try await transport.send(attemptRequest)
                if (200..<300).contains(response.status) || response.status == 304 {
                    return response
                }
                failure = .status(url: response.url, code: response.status)
                if response.status == 429 || response.status == 503, let value = response.headers["retry-after"] {
                    retryAfter = Self.retryAfter(value, now: clock.now())
                }
            } catch let error as HTTPError {
                failure = error
            }
            spent += ContinuousClock.now - started
            guard failure.isTransient else { throw failure }
            guard attempt < attempts else { throw HTTPError.gaveUp(failure, attempts: attempt, timeout: request.timeout) }

            let delay =
                retryAfter.map { min($0, max(policy.maximumRetryAfter, .zero)) }
                ?? policy.backoff(beforeRetry: attempt, random: random())
            // No wait, and so no attempt, starts that would end past the request's timeout, nor an
            // attempt left less than a tenth of it (at most a second): it could only time out,
            // and its timeout would be reported instead of the failure before it (a body cut
            // short, say).
            let leastUseful = min(request.timeout / 10, .seconds(1))
            guard spent + delay + leastUseful <= request.timeout else {
                throw HTTPError.gaveUp(failure, attempts: attempt, timeout: request.timeout)
            }
            try Task.checkCancellation()
            try await clock.sleep(delay)
            spent += delay
            attempt += 1
        }
    }

    /// A Retry-After value as a wait from `now`: delta-seconds ("120") or an HTTP-date
    /// ("Wed, 21 Oct 2015 07:28:00 GMT", also the obsolete RFC 850 and asctime forms).
    /// A date in the past means no wait; an unreadable value is nil (plain backoff applies).
    static func retryAfter(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) {
            // A number too large for Int is still a (very long) wait; the policy caps it.
            return .seconds(Int64(text) ?? Int64.max)
        }
        guard let date = httpDate(text) else { return nil }
        let seconds = date.timeIntervalSince(now)
        return seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded(.up))) : .zero
    }

    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
