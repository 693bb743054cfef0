import Foundation

// Consuming streams in tests with limits, so no test can hang: a limit is reached only when
// something is wrong, so limits are generous (a loaded 2-core machine stalls for seconds).

/// A wait that ran past its deadline.
public struct ObservationTimeout: Error, CustomStringConvertible {
    public let what: String
    public let seconds: Double
    public var description: String { "timed out after \(seconds)s waiting for \(what)" }
}

/// A stream that ended while the test still expected an element.
public struct ObservedStreamEnded: Error, CustomStringConvertible {
    public let failure: String?
    public var description: String { failure.map { "the stream failed: \($0)" } ?? "the stream finished" }
}

/// Runs `body`, racing it against a sleep of `seconds`: its result, or `ObservationTimeout` (the
/// body is then cancelled).
public func withObservationDeadline<T: Sendable>(
    _ seconds: Double, _ what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try? await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        defer { group.cancelAll() }
        // The first child to finish decides: the body's value, or nil from the sleep.
        guard let first = try await group.next(), let value = first else {
            throw ObservationTimeout(what: what, seconds: seconds)
        }
        return value
    }
}

/// Polls `condition` every 10 ms until it holds; false if it still does not after `seconds`.
public func eventually(within seconds: Double = 60, _ condition: @Sendable () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
}

/// Consumes an async sequence in a task of its own (the "consuming task") and records what it
/// emits and how it ends, so a test awaits elements with a limit instead of iterating. A wait is
/// woken by the element itself (no polling); its limit fires on a dispatch queue of its own.
public final class StreamProbe<Element: Sendable>: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `elements`, `consumed`, `end` and `waiter` are read and
    // written only while `lock` is held; `task` is set once in init, before the probe is shared;
    // the waiter's continuation is resumed once, outside the lock.
    public enum End: Sendable {
        case finished
        case failed(String)
    }

    private let lock = NSLock()
    private var elements: [Element] = []
    private var consumed = 0
    private var end: End?
    private var waiter: (id: Int, continuation: CheckedContinuation<Void, Never>)?
    private var nextWaiter = 0
    private var task: Task<Void, Never>?
    private static var timers: DispatchQueue { probeTimers }

    public init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        task = Task { [self] in
            do {
                for try await element in sequence { update { elements.append(element) } }
                update { end = .finished }
            } catch is CancellationError {
                update { end = .finished }
            } catch {
                update { end = .failed(String(describing: error)) }
            }
        }
    }

    deinit { task?.cancel() }

    /// Changes the state and wakes the test's wait, if any.
    private func update(_ change: () -> Void) {
        let woken = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            change()
            defer { waiter = nil }
            return waiter?.continuation
        }
        woken?.resume()
    }

    /// Everything emitted so far.
    public var all: [Element] { lock.withLock { elements } }

    /// How the stream ended; nil while it runs.
    public var ended: End? { lock.withLock { end } }

    /// The next element not yet taken; `ObservationTimeout` if none comes within `seconds`,
    /// `ObservedStreamEnded` if the stream ends first.
    public func next(within seconds: Double = 60) async throws -> Element {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            let (element, ending): (Element?, End?) = lock.withLock {
                if consumed < elements.count {
                    consumed += 1
                    return (elements[consumed - 1], nil)
                }
                return (nil, self.end)
            }
            if let element { return element }
            if let ending {
                if case .failed(let reason) = ending { throw ObservedStreamEnded(failure: reason) }
                throw ObservedStreamEnded(failure: nil)
            }
            let left = deadline - ContinuousClock.now
            if left <= .zero { throw ObservationTimeout(what: "the next element", seconds: seconds) }
            await waitForChange(within: left)
        }
    }

    /// Returns when an element arrives or the stream ends (or `limit` passes).
    private func waitForChange(within limit: Duration) async {
        await wait(within: limit) { [self] in consumed < elements.count || end != nil }
    }

    /// Returns once `ready` (evaluated under the lock, now and after every change) holds, or
    /// `limit` has passed.
    private func wait(within limit: Duration, until ready: @escaping () -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (id, isReady) = lock.withLock { () -> (Int, Bool) in
                nextWaiter += 1
                if ready() { return (nextWaiter, true) }
                waiter = (nextWaiter, continuation)
                return (nextWaiter, false)
            }
            if isReady { return continuation.resume() }
            Self.timers.asyncAfter(deadline: .now() + limit.seconds) { [self] in
                let expired = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                    guard let waiter, waiter.id == id else { return nil }
                    defer { self.waiter = nil }
                    return waiter.continuation
                }
                expired?.resume()
            }
        }
    }

    /// Takes elements until one satisfies `predicate` and returns every element taken, that one
    /// last; throws if none does within `seconds` in all.
    public func take(until predicate: (Element) -> Bool, within seconds: Double = 60) async throws -> [Element] {
        let start = ContinuousClock.now
        var taken: [Element] = []
        while true {
            let left = seconds - (ContinuousClock.now - start).seconds
            let element = try await next(within: max(0.01, left))
            taken.append(element)
            if predicate(element) { return taken }
        }
    }

    /// The elements (not yet taken) that arrive within `seconds`; waits the whole time. For
    /// asserting that nothing arrives: a wait that can only pass by waiting.
    public func untakenAfterWaiting(_ seconds: Double) async throws -> [Element] {
        try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
        return lock.withLock { Array(elements[consumed...]) }
    }

    /// Cancels the consuming task.
    public func cancel() { task?.cancel() }

    /// Waits for the stream to end; nil if it has not within `seconds`.
    public func waitForEnd(within seconds: Double = 60) async -> End? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ended == nil {
            let left = deadline - ContinuousClock.now
            if left <= .zero { break }
            // Elements arriving also wake this wait; it goes round until the end.
            await waitForEndOrElement(within: left)
        }
        return ended
    }

    private func waitForEndOrElement(within limit: Duration) async {
        let seen = lock.withLock { elements.count }
        await wait(within: limit) { [self] in elements.count != seen || end != nil }
    }
}

/// Where stream probes' limits fire: a serial queue of its own, never the cooperative pool.
private let probeTimers = DispatchQueue(label: "store-test-support.stream-probes")

extension Duration {
    public var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
