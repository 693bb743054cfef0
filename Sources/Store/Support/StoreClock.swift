import Foundation

/// Where the store reads the time and how it waits (retry backoff). Injected so tests can fix
/// the time and skip the waiting.
public struct StoreClock: Sendable {
    /// The current time: stamps migrations, image cache accesses, sync history.
    public var now: @Sendable () -> Date
    /// Waits for a duration (retry backoff); throws `CancellationError` when the waiting task
    /// is cancelled, as `Task.sleep` does.
    public var sleep: @Sendable (Duration) async throws -> Void

    /// A clock reading the time from `now` and waiting with `sleep` (by default `Task.sleep`).
    public init(
        now: @escaping @Sendable () -> Date,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.now = now
        self.sleep = sleep
    }

    /// The system clock; sleeping really waits.
    public static let live = StoreClock { Date() }

    /// A clock that always reads `date` and never waits.
    public static func fixed(_ date: Date) -> StoreClock { StoreClock(now: { date }, sleep: { _ in }) }
}
