import Dispatch
import Foundation

/// Waits for `semaphore` on a thread of its own, so neither the cooperative thread pool nor
/// the global dispatch queues (which share its threads on Linux) are blocked; true if it was
/// signalled within `seconds`.
func wait(for semaphore: DispatchSemaphore, seconds: Double = 10) async -> Bool {
    await withCheckedContinuation { continuation in
        Thread {
            continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success)
        }.start()
    }
}

/// The outcome of `body`, success or error, for tests that expect some calls to fail.
func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}
