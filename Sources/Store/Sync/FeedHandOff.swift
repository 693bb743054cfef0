import Foundation

/// The bounded hand-off between sync's two threads (`FeedPipeline`): the reader thread sends
/// full batches, the writer's thread receives them in the order sent, and at most `capacity`
/// wait between them, so memory stays constant however large the feed.
///
/// Either side can end the exchange: the reader with `finish(_:)` (its error, if any, reaches
/// the writer after the batches sent before it), the writer with `stop()` (the reader's next
/// `send` or `isStopped` tells it to give up). The reader's last act is `exit()`, which the
/// writer waits for (`waitForExit()`), so the writer never goes on while the reader still runs.
final class FeedHandOff: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every stored property but the constant `capacity` is read
    // and written only while `condition` is held (its waits release it and take it back). The
    // batches are not Sendable, but each changes hands once: `send` takes it from the reader,
    // which keeps no reference it writes through again (`FeedBatchSink.flush` starts a new one),
    // and `receive` removes it from `queue` as it gives it to the writer.
    private let condition = NSCondition()
    private let capacity: Int
    private var queue: [FeedBatch] = []
    /// Set once by the reader: it sent its last batch; `failure` is why it stopped, if it failed.
    private var finished = false
    private var failure: (any Error)?
    /// Set by the writer: the reader must stop, nothing more is received.
    private var stopped = false
    /// Set by the reader as the last thing it does.
    private var exited = false

    /// `capacity`: how many batches may wait for the writer before the reader waits (at least 1).
    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    // MARK: The reader's side

    /// Queues `batch` for the writer, waiting while `capacity` batches already wait; false (the
    /// batch dropped) once the writer stopped.
    func send(_ batch: FeedBatch) -> Bool {
        condition.withLock {
            while queue.count >= capacity, !stopped { condition.wait() }
            if stopped { return false }
            queue.append(batch)
            condition.broadcast()
            return true
        }
    }

    /// Whether the writer stopped: the reader should give up.
    var isStopped: Bool { condition.withLock { stopped } }

    /// The reader sent everything it will: the writer receives `error` (if any) after the batches.
    func finish(_ error: (any Error)?) {
        condition.withLock {
            finished = true
            failure = error
            condition.broadcast()
        }
    }

    /// The reader's last act: it no longer touches anything the writer owns.
    func exit() {
        condition.withLock {
            exited = true
            condition.broadcast()
        }
    }

    // MARK: The writer's side

    /// The next batch in the order sent; nil once the reader finished without error and every
    /// batch was received; throws the reader's error after its batches. While it waits, `check`
    /// runs every `interval` seconds (a cancellation check): what it throws ends the wait.
    func receive(checkingEvery interval: TimeInterval, _ check: () throws -> Void) throws -> FeedBatch? {
        while true {
            let (batch, done, error): (FeedBatch?, Bool, (any Error)?) = condition.withLock {
                if queue.isEmpty, !finished, !stopped {
                    _ = condition.wait(until: Date(timeIntervalSinceNow: interval))
                }
                if !queue.isEmpty {
                    let batch = queue.removeFirst()
                    condition.broadcast()
                    return (batch, false, nil)
                }
                if finished { return (nil, true, failure) }
                return (nil, stopped, nil)
            }
            if let batch { return batch }
            if let error { throw error }
            if done { return nil }
            try check()
        }
    }

    /// The writer gives up: the reader's waits end, its later sends are refused, and batches
    /// still queued are dropped.
    func stop() {
        condition.withLock {
            stopped = true
            queue.removeAll()
            condition.broadcast()
        }
    }

    /// Waits until the reader has made its last act (`exit()`).
    func waitForExit() {
        condition.withLock {
            while !exited { condition.wait() }
        }
    }
}
