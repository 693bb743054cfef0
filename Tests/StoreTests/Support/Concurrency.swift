import Dispatch

/// Waits for `semaphore` on a global dispatch queue, so the cooperative thread pool is never
/// blocked; true if it was signalled within `seconds`.
func wait(for semaphore: DispatchSemaphore, seconds: Double = 10) async -> Bool {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success)
        }
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
