import Foundation

/// One piece of async work shared by several callers (single flight), each of which may be
/// cancelled on its own: a cancelled caller stops waiting at once with `CancellationError`,
/// the others keep waiting, and the work itself is cancelled once every caller that joined it
/// was cancelled (then it is abandoned: `join()` refuses, and a new caller starts another).
final class SharedFlight<Value: Sendable>: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every `var` is read and written only while `lock` is
    // held. Each continuation is taken out of `waiting` under the lock by whoever resumes it
    // (`finish` or `leave`), so it is resumed exactly once, after the lock is released.
    private let lock = NSLock()
    private var outcome: Result<Value, any Error>?
    private var waiting: [Int: CheckedContinuation<Value, any Error>] = [:]
    /// Callers cancelled before they started waiting: they must not wait.
    private var left: Set<Int> = []
    private var lastID = 0
    /// Callers that joined and were not cancelled.
    private var members = 0
    private var abandoned = false
    private var task: Task<Void, Never>?

    /// Starts `work`; the caller that starts it has joined it.
    init(_ work: @escaping @Sendable () async throws -> Value) {
        members = 1
        let task = Task { [self] in
            do {
                finish(.success(try await work()))
            } catch {
                finish(.failure(error))
            }
        }
        lock.withLock { self.task = task }
    }

    /// Joins the flight as one more caller; false once it was abandoned.
    func join() -> Bool {
        lock.withLock {
            if abandoned { return false }
            members += 1
            return true
        }
    }

    /// Whether it is over: finished, or abandoned by every caller.
    var isSettled: Bool { lock.withLock { outcome != nil || abandoned } }

    /// The work's value, for a caller that joined; `CancellationError` as soon as that caller's
    /// task is cancelled.
    func value() async throws -> Value {
        let id = lock.withLock { () -> Int in
            lastID += 1
            return lastID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let ready = lock.withLock { () -> Result<Value, any Error>? in
                    if let outcome { return outcome }
                    if left.remove(id) != nil { return .failure(CancellationError()) }
                    waiting[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            leave(id)
        }
    }

    private func leave(_ id: Int) {
        let (continuation, abandonedTask) = lock.withLock { () -> (CheckedContinuation<Value, any Error>?, Task<Void, Never>?) in
            guard outcome == nil else { return (nil, nil) }
            let continuation = waiting.removeValue(forKey: id)
            if continuation == nil { left.insert(id) }
            members -= 1
            guard members == 0 else { return (continuation, nil) }
            abandoned = true
            return (continuation, task)
        }
        continuation?.resume(throwing: CancellationError())
        abandonedTask?.cancel()
    }

    private func finish(_ result: Result<Value, any Error>) {
        let continuations = lock.withLock { () -> [CheckedContinuation<Value, any Error>] in
            outcome = result
            defer { waiting.removeAll() }
            return Array(waiting.values)
        }
        for continuation in continuations { continuation.resume(with: result) }
    }
}
