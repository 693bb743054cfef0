import Foundation

/// A value shared between threads, read and written only inside `withLock`: the one shape of
/// the store's small process-wide tables (temporary files being written, a test hook, the SQL
/// of registered kinds), and of storectl's (the full-disk note, said once a process).
package final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `value` is private and touched only in `withLock`, with
    // `lock` held; `withLock` hands it out as `inout` for the closure's duration alone.
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` on the value with the lock held; `body` must not escape it.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
