import Foundation

/// Whether a task was cancelled, readable from any thread: set by the task's cancellation
/// handler, read by the work it asked for where that work runs (the writer's queue, a reader's),
/// outside the task, where `Task.isCancelled` cannot see it.
final class CancellationFlag: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `cancelled` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var cancelled = false

    var isCancelled: Bool { lock.withLock { cancelled } }

    func cancel() { lock.withLock { cancelled = true } }
}
