import Dispatch

/// A serial executor that runs its jobs on a dedicated dispatch queue.
///
/// An actor that takes this executor runs its blocking SQLite calls on that queue's thread,
/// not on Swift's cooperative thread pool, which has only as many threads as cores and must
/// never be blocked for long (GRDB answers the same way with a serial dispatch queue).
final class SerialQueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
