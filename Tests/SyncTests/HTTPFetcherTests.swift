import Foundation
import Testing

@testable import Store

/// `HTTPFetcher` over the live transport against feed_server.py; the clock records the
/// backoff instead of sleeping, so retries cost no time.
@Suite(.timeLimit(.minutes(10)))
struct HTTPFetcherTests {
    let feed = #"{"version":1}"#
    let recorder = SleepRecorder()

    /// Jitter fixed at one half: the first backoff is 0.25 + 0.25 × 0.5 = 0.375 s.
    func fetcher(_ policy: RetryPolicy = RetryPolicy(), now: Date = Date(timeIntervalSince1970: 1_800_000_000)) -> HTTPFetcher {
        HTTPFetcher(transport: .live, clock: recorder.clock(now: now), policy: policy, random: { 0.5 })
    }

    @Test func serverErrorThenSuccessIsRetried() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        try server.publish("feed.json", feed)

        let response = try await fetcher().fetch(HTTPRequest(url: server.url("/status/500-then-200/feed.json")))

        #expect(response.status == 200)
        #expect(response.body == Data(feed.utf8))
        #expect(try await server.hits("/status/500-then-200/feed.json") == 2)
        #expect(await recorder.sleeps == [.milliseconds(375)])
    }

    @Test func serverErrorsUntilTheLastAttempt() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = server.url("/status/502")

        let (error, _) = await failure { try await fetcher().fetch(HTTPRequest(url: url)) }

        #expect(error as? HTTPError == .gaveUp(.status(url: url, code: 502), attempts: 4, timeout: .seconds(30)))
        #expect("\(error!)" == "\(url.absoluteString): HTTP 502, 4 attempts")
        #expect(try await server.hits("/status/502") == 4)
        #expect(await recorder.sleeps == [.milliseconds(375), .milliseconds(750), .milliseconds(1500)])
    }

    @Test func tooManyRequestsHonoursRetryAfter() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        try server.publish("feed.json", feed)

        let response = try await fetcher().fetch(
            HTTPRequest(url: server.url("/status/429-then-200/feed.json?retry-after=1")))

        #expect(response.status == 200)
        #expect(try await server.hits("/status/429-then-200/feed.json") == 2)
        let sleeps = await recorder.sleeps
        #expect(sleeps == [.seconds(1)])
        #expect(sleeps.allSatisfy { $0 >= .seconds(1) })
    }

    @Test func retryAfterIsCapped() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        try server.publish("feed.json", feed)
        let policy = RetryPolicy(maximumRetryAfter: .seconds(60))

        // The request's timeout is longer than the cap: a wait past it is never started.
        let response = try await fetcher(policy).fetch(
            HTTPRequest(url: server.url("/status/429-then-200/feed.json?retry-after=3600"), timeout: .seconds(120)))

        #expect(response.status == 200)
        #expect(await recorder.sleeps == [.seconds(60)])
    }

    @Test func serviceUnavailableWithAnHTTPDate() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        try server.publish("feed.json", feed)
        // The test clock reads 2027-01-15 08:00:00 UTC; the server asks for 08:00:05.
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let date = percentEncoded("Fri, 15 Jan 2027 08:00:05 GMT")

        let response = try await fetcher(now: now).fetch(
            HTTPRequest(url: server.url("/status/503-then-200/feed.json?retry-after=\(date)")))

        #expect(response.status == 200)
        #expect(await recorder.sleeps == [.seconds(5)])
    }

    @Test func notFoundIsNotRetried() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = server.url("/missing.json")

        let (error, _) = await failure { try await fetcher().fetch(HTTPRequest(url: url)) }

        #expect(error as? HTTPError == .status(url: url, code: 404))
        #expect(try await server.hits("/missing.json") == 1)
        #expect(await recorder.sleeps.isEmpty)
    }

    @Test func notModifiedIsAResponse() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = try server.publish("feed.json", feed)
        let first = try await fetcher().fetch(HTTPRequest(url: url))
        let etag = try #require(first.headers["etag"])

        let second = try await fetcher().fetch(HTTPRequest(url: url, headers: ["If-None-Match": etag]))

        #expect(second.status == 304)
        #expect(try await server.hits("/feed.json") == 2)
    }

    @Test func truncatedBodyIsRetried() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = server.url("/truncated")

        let (error, _) = await failure {
            try await fetcher(RetryPolicy(maximumAttempts: 3)).fetch(HTTPRequest(url: url))
        }

        #expect(
            error as? HTTPError == .gaveUp(.truncated(url: url, expected: 1000, received: 10), attempts: 3, timeout: .seconds(30))
        )
        #expect(try await server.hits("/truncated") == 3)
        #expect(await recorder.sleeps.count == 2)
    }

    @Test func slowBodyTimesOut() async throws {
        // Timeouts are retried, so one attempt only: the point is that it does not hang.
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = server.url("/slow?seconds=600")

        let (error, took) = await failure {
            try await fetcher(RetryPolicy(maximumAttempts: 1)).fetch(HTTPRequest(url: url, timeout: .seconds(1)))
        }

        #expect(error as? HTTPError == .gaveUp(.timedOut(url: url, after: .seconds(1)), attempts: 1, timeout: .seconds(1)))
        #expect("\(error!)" == "\(url.absoluteString): timed out after 1 s, 1 attempt")
        #expect(took < .seconds(180)) // the server stalls 600 s: still bounded, with room for a loaded machine
        #expect(try await server.hits("/slow") == 1)
    }

    @Test func tooLargeIsNotRetried() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = server.url("/big?bytes=5000")

        let (error, _) = await failure { try await fetcher().fetch(HTTPRequest(url: url, maximumBytes: 1000)) }

        #expect(error as? HTTPError == .tooLarge(url: url, limit: 1000))
        #expect(try await server.hits("/big") == 1)
        #expect(await recorder.sleeps.isEmpty)
    }

    @Test func redirectLoopIsNotRetried() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }
        let url = server.url("/redirect-loop")

        let (error, _) = await failure { try await fetcher().fetch(HTTPRequest(url: url, maximumRedirects: 2)) }

        #expect(error as? HTTPError == .tooManyRedirects(url: url, limit: 2))
        #expect(try await server.hits("/redirect-loop") == 3)
    }
}

/// The fetcher's decisions with a scripted transport: no network at all.
struct RetryDecisionTests {
    let url = URL(string: "https://feeds.example.com/feed.json")!

    /// A transport that answers from a list, one entry per attempt, and counts the attempts.
    final class Script: Sendable {
        let attempts = Counter()
        let steps: [Result<HTTPResponse, HTTPError>]
        init(_ steps: [Result<HTTPResponse, HTTPError>]) { self.steps = steps }

        var transport: HTTPTransport {
            HTTPTransport { [self] _ in
                let index = await attempts.next()
                return try steps[min(index, steps.count - 1)].get()
            }
        }
    }

    actor Counter {
        private(set) var value = 0
        func next() -> Int {
            defer { value += 1 }
            return value
        }
    }

    @Test func backoffGrowsExponentiallyWithinTheJitterBounds() {
        let policy = RetryPolicy(maximumAttempts: 10, baseDelay: .milliseconds(500), maximumDelay: .seconds(30))
        for retry in 1...9 {
            let ceiling = min(Duration.milliseconds(500) * (1 << (retry - 1)), .seconds(30))
            let low = policy.backoff(beforeRetry: retry, random: 0)
            let middle = policy.backoff(beforeRetry: retry, random: 0.5)
            let high = policy.backoff(beforeRetry: retry, random: 0.999_999)
            #expect(low == ceiling / 2)
            #expect(low <= middle && middle <= high && high <= ceiling)
            #expect(middle == ceiling * 0.75)
        }
        // Doubling until the cap.
        #expect(policy.backoff(beforeRetry: 1, random: 1) == .milliseconds(500))
        #expect(policy.backoff(beforeRetry: 2, random: 1) == .seconds(1))
        #expect(policy.backoff(beforeRetry: 3, random: 1) == .seconds(2))
        #expect(policy.backoff(beforeRetry: 7, random: 1) == .seconds(30))
        #expect(policy.backoff(beforeRetry: 1000, random: 1) == .seconds(30))
        // Out-of-range jitter is clamped.
        #expect(policy.backoff(beforeRetry: 1, random: -3) == .milliseconds(250))
        #expect(policy.backoff(beforeRetry: 1, random: 7) == .milliseconds(500))
        #expect(policy.backoff(beforeRetry: 1, random: .nan) == .milliseconds(250))
    }

    @Test func fetcherUsesTheInjectedJitter() async throws {
        let script = Script([.failure(.connectionFailed(url: url, reason: "refused"))])
        let recorder = SleepRecorder()
        let jitter = Script.Jitter([0, 1, 0.5])
        let fetcher = HTTPFetcher(
            transport: script.transport, clock: recorder.clock(),
            policy: RetryPolicy(maximumAttempts: 4, baseDelay: .seconds(1)),
            random: { jitter.next() })

        let (error, _) = await failure { try await fetcher.fetch(HTTPRequest(url: url)) }

        #expect(
            error as? HTTPError == .gaveUp(.connectionFailed(url: url, reason: "refused"), attempts: 4, timeout: .seconds(30)))
        #expect(await script.attempts.value == 4)
        // Ceilings 1 s, 2 s, 4 s with jitter 0, 1 and 0.5.
        #expect(await recorder.sleeps == [.milliseconds(500), .seconds(2), .seconds(3)])
    }

    /// `request.timeout` bounds the request, retries included: no wait or attempt starts past
    /// it, however many attempts the policy allows, and the error says how many were made.
    @Test func retriesStopAtTheRequestsTimeout() async throws {
        let script = Script([.failure(.connectionFailed(url: url, reason: "refused"))])
        let recorder = SleepRecorder()
        let fetcher = HTTPFetcher(
            transport: script.transport, clock: recorder.clock(),
            policy: RetryPolicy(maximumAttempts: 10, baseDelay: .seconds(1)), random: { 0 })

        let (error, _) = await failure { try await fetcher.fetch(HTTPRequest(url: url, timeout: .seconds(3))) }

        // Waits of 0.5 s and 1 s; the next, 2 s, would end past 3 s: three attempts in all.
        #expect(await recorder.sleeps == [.milliseconds(500), .seconds(1)])
        #expect(await script.attempts.value == 3)
        #expect(error as? HTTPError == .gaveUp(.connectionFailed(url: url, reason: "refused"), attempts: 3, timeout: .seconds(3)))
        #expect("\(error!)" == "\(url.absoluteString): cannot connect: refused, 3 attempts")
    }

    /// No attempt starts with less than a tenth of the timeout left: it could only time out, and
    /// that timeout was reported instead of the failure before it (a body cut short).
    @Test func noAttemptStartsWithTooLittleTimeLeft() async throws {
        let script = Script([
            .failure(.truncated(url: url, expected: 226, received: 126)), .failure(.timedOut(url: url, after: .milliseconds(50))),
        ])
        let recorder = SleepRecorder()
        let fetcher = HTTPFetcher(
            transport: script.transport, clock: recorder.clock(),
            policy: RetryPolicy(maximumAttempts: 4, baseDelay: .milliseconds(1900)), random: { 0 })

        let (error, _) = await failure { try await fetcher.fetch(HTTPRequest(url: url, timeout: .seconds(1))) }

        // The wait would be 0.95 s, leaving 0.05 s of the second: no second attempt.
        #expect(await script.attempts.value == 1)
        #expect(
            error as? HTTPError
                == .gaveUp(.truncated(url: url, expected: 226, received: 126), attempts: 1, timeout: .seconds(1)))
    }

    /// A Retry-After that ends past the request's timeout is not waited for.
    @Test func retryAfterPastTheTimeoutGivesUp() async throws {
        let busy = HTTPResponse(url: url, status: 503, headers: ["Retry-After": "60"])
        let script = Script([.success(busy)])
        let recorder = SleepRecorder()
        let fetcher = HTTPFetcher(transport: script.transport, clock: recorder.clock())

        let (error, _) = await failure { try await fetcher.fetch(HTTPRequest(url: url, timeout: .seconds(10))) }

        #expect(await recorder.sleeps.isEmpty)
        #expect(error as? HTTPError == .gaveUp(.status(url: url, code: 503), attempts: 1, timeout: .seconds(10)))
    }

    @Test func transientFailuresAreRetriedOthersAreNot() async throws {
        let transient: [HTTPError] = [
            .connectionFailed(url: url, reason: "reset"), .timedOut(url: url, after: .seconds(1)),
            .truncated(url: url, expected: 10, received: 1),
        ]
        let final: [HTTPError] = [
            .tooLarge(url: url, limit: 1), .tooManyRedirects(url: url, limit: 5),
            .redirectRefused(from: url, to: URL(string: "http://feeds.example.com/")!, reason: "downgrade"),
        ]
        let ok = HTTPResponse(url: url, status: 200, body: Data("{}".utf8))
        for error in transient {
            let script = Script([.failure(error), .success(ok)])
            let fetcher = HTTPFetcher(transport: script.transport, clock: SleepRecorder().clock())
            #expect(try await fetcher.fetch(HTTPRequest(url: url)) == ok)
            #expect(await script.attempts.value == 2)
        }
        for error in final {
            let script = Script([.failure(error), .success(ok)])
            let fetcher = HTTPFetcher(transport: script.transport, clock: SleepRecorder().clock())
            let (thrown, _) = await failure { try await fetcher.fetch(HTTPRequest(url: url)) }
            #expect(thrown as? HTTPError == error)
            #expect(await script.attempts.value == 1)
        }
    }

    @Test(arguments: [500, 502, 503, 504, 429])
    func retriedStatuses(code: Int) async throws {
        let script = Script([.success(HTTPResponse(url: url, status: code)), .success(HTTPResponse(url: url, status: 200))])
        let fetcher = HTTPFetcher(transport: script.transport, clock: SleepRecorder().clock())
        #expect(try await fetcher.fetch(HTTPRequest(url: url)).status == 200)
        #expect(await script.attempts.value == 2)
    }

    @Test(arguments: [301, 400, 401, 403, 404, 410, 418])
    func finalStatuses(code: Int) async throws {
        let script = Script([.success(HTTPResponse(url: url, status: code)), .success(HTTPResponse(url: url, status: 200))])
        let fetcher = HTTPFetcher(transport: script.transport, clock: SleepRecorder().clock())
        let (error, _) = await failure { try await fetcher.fetch(HTTPRequest(url: url)) }
        #expect(error as? HTTPError == .status(url: url, code: code))
        #expect(await script.attempts.value == 1)
    }

    @Test(arguments: [200, 204, 206, 304])
    func successfulStatuses(code: Int) async throws {
        let script = Script([.success(HTTPResponse(url: url, status: code))])
        let fetcher = HTTPFetcher(transport: script.transport, clock: SleepRecorder().clock())
        #expect(try await fetcher.fetch(HTTPRequest(url: url)).status == code)
    }

    @Test func retryAfterOnlyOn429And503() async throws {
        let recorder = SleepRecorder()
        let script = Script([
            .success(HTTPResponse(url: url, status: 500, headers: ["Retry-After": "9"])),
            .success(HTTPResponse(url: url, status: 503, headers: ["Retry-After": "9"])),
            .success(HTTPResponse(url: url, status: 429, headers: ["Retry-After": "garbage"])),
            .success(HTTPResponse(url: url, status: 200)),
        ])
        let fetcher = HTTPFetcher(transport: script.transport, clock: recorder.clock(), random: { 0 })
        #expect(try await fetcher.fetch(HTTPRequest(url: url)).status == 200)
        // 500 ignores Retry-After (backoff 0.25 s); 503 honours it; unreadable → backoff 1 s.
        #expect(await recorder.sleeps == [.milliseconds(250), .seconds(9), .seconds(1)])
    }

    @Test func retryAfterParsing() {
        let now = Date(timeIntervalSince1970: 1_445_412_450) // Wed, 21 Oct 2015 07:27:30 GMT
        #expect(HTTPFetcher.retryAfter("120", now: now) == .seconds(120))
        #expect(HTTPFetcher.retryAfter(" 0 ", now: now) == .zero)
        #expect(HTTPFetcher.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now: now) == .seconds(30))
        #expect(HTTPFetcher.retryAfter("Wednesday, 21-Oct-15 07:28:00 GMT", now: now) == .seconds(30))
        #expect(HTTPFetcher.retryAfter("Wed Oct 21 07:28:00 2015", now: now) == .seconds(30))
        #expect(HTTPFetcher.retryAfter("Wed, 21 Oct 2015 07:00:00 GMT", now: now) == .zero)
        #expect(HTTPFetcher.retryAfter("-5", now: now) == nil)
        #expect(HTTPFetcher.retryAfter("soon", now: now) == nil)
        #expect(HTTPFetcher.retryAfter("", now: now) == nil)
        #expect(HTTPFetcher.retryAfter("99999999999999999999999", now: now)! > .seconds(1_000_000))
    }

    @Test func cancellationBetweenAttempts() async throws {
        let script = Script([.failure(.connectionFailed(url: url, reason: "refused"))])
        // The "sleep" cancels the task, as if the user gave up while waiting for a retry.
        let clock = StoreClock(now: { Date() }, sleep: { _ in withUnsafeCurrentTask { $0?.cancel() } })
        let fetcher = HTTPFetcher(transport: script.transport, clock: clock)

        let (error, _) = await failure { try await fetcher.fetch(HTTPRequest(url: url)) }

        #expect(error is CancellationError)
        #expect(await script.attempts.value == 1)
    }

    @Test func atLeastOneAttempt() async throws {
        let script = Script([.success(HTTPResponse(url: url, status: 200))])
        let fetcher = HTTPFetcher(
            transport: script.transport, clock: SleepRecorder().clock(),
            policy: RetryPolicy(maximumAttempts: 0))
        #expect(try await fetcher.fetch(HTTPRequest(url: url)).status == 200)
    }
}

extension RetryDecisionTests.Script {
    /// Hands out the given jitter values in turn (then repeats the last).
    struct Jitter: Sendable {
        private let index = Locked(0)
        private let values: [Double]
        init(_ values: [Double]) { self.values = values }

        func next() -> Double {
            index.withLock { index in
                defer { index += 1 }
                return values[min(index, values.count - 1)]
            }
        }
    }
}
