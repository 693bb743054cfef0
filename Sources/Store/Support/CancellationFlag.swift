import Foundation

/// Whether a task was cancelled, readable from any thread: set by the task's cancellation
/// handler, read by the work it asked for where that work runs (the writer's queue, a reader's),
/// outside the task, where `Task.isCancelled` cannot see it.
final class CancellationFlag: Sendable {
    private let cancelled = LockedBox(false)

    var isCancelled: Bool { cancelled.withLock { $0 } }

    func cancel() { cancelled.withLock { $0 = true } }
}
