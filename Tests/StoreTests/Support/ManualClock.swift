import Foundation

@testable import Store

/// A clock that stands still until the test advances it.
final class ManualClock: @unchecked Sendable {
    // Why @unchecked Sendable is safe: `current` is read and written only while `lock` is held.
    private let lock = NSLock()
    private var current: Date

    /// Starts at a whole second, so every reading survives the store's millisecond precision.
    init(_ start: Date = Date(timeIntervalSince1970: 1_767_225_600)) { // 2026-01-01T00:00:00Z
        current = start
    }

    var now: Date { lock.withLock { current } }

    /// Moves the time forward and returns the new reading.
    @discardableResult
    func advance(seconds: TimeInterval = 1) -> Date {
        lock.withLock {
            current += seconds
            return current
        }
    }

    /// The clock as the store takes it.
    var storeClock: StoreClock { StoreClock { [self] in now } }
}
