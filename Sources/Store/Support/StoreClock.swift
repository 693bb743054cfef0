import Foundation

/// Where the store reads the time (image access times, migration records, default order times).
/// Injected so tests can fix it.
public struct StoreClock: Sendable {
    public var now: @Sendable () -> Date

    public init(now: @escaping @Sendable () -> Date) { self.now = now }

    /// The system clock.
    public static let live = StoreClock { Date() }

    /// A clock that always reads `date`.
    public static func fixed(_ date: Date) -> StoreClock { StoreClock { date } }
}
