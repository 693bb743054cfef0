import Foundation

/// A value shared between tasks and threads, read and changed only under its lock.
public final class Locked<Value>: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `value` is touched only inside `withLock`, while `lock` is
    // held, and never escapes it by reference (a class Value would be the caller's to guard).
    private let lock = NSLock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, under the lock.
    public func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        try lock.withLock { try body(&value) }
    }

    /// A copy of the value.
    public var current: Value { withLock { $0 } }
}

/// Waits for `semaphore` on a thread of its own, so neither Swift's cooperative pool nor the
/// global dispatch queues are blocked; true if it was signalled within `seconds`.
public func wait(for semaphore: DispatchSemaphore, seconds: Double = 60) async -> Bool {
    await withCheckedContinuation { continuation in
        Thread {
            continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success)
        }.start()
    }
}
