import Foundation
import Store

/// A `StoreClock` that reads a fixed time and records each requested sleep instead of waiting.
actor SleepRecorder {
    private(set) var sleeps: [Duration] = []

    func record(_ duration: Duration) {
        sleeps.append(duration)
    }

    nonisolated func clock(now: Date = Date(timeIntervalSince1970: 1_800_000_000)) -> StoreClock {
        StoreClock(now: { now }, sleep: { duration in await self.record(duration) })
    }
}

/// Measures how long `body` takes on the continuous clock.
func elapsed<T>(_ body: () async throws -> T) async rethrows -> (T, Duration) {
    let start = ContinuousClock.now
    let value = try await body()
    return (value, ContinuousClock.now - start)
}

/// Runs `body` and returns the error it throws (nil when it returns), with the time it took.
func failure<T>(_ body: () async throws -> T) async -> (error: (any Error)?, took: Duration) {
    let start = ContinuousClock.now
    do {
        _ = try await body()
        return (nil, ContinuousClock.now - start)
    } catch {
        return (error, ContinuousClock.now - start)
    }
}

func percentEncoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
}
