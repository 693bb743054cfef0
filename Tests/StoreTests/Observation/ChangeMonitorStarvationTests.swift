import Foundation
import Testing

@testable import Store

/// The change monitor finds another connection's commit even while every thread of Swift's
/// cooperative pool is blocked (by an app's careless code, or a busy test run): its timer fires
/// on a queue of its own and it reads the log on a reader's queue. Before, it polled with
/// `Task.sleep` on the pool and saw nothing until a thread came free.
@Suite("Change monitor: detection without the cooperative pool")
struct ChangeMonitorStarvationTests {
    @Test func findsAnotherConnectionsCommitWhileThePoolIsBlocked() async throws {
        try await withTemporaryStore { store, directory throws in
            let delivered = DispatchSemaphore(value: 0)
            let subscription = store.changeMonitor.subscribe(
                readsStart: false,
                deliver: { batch in if batch.changes.contains(where: { $0.key == "elsewhere" }) { delivered.signal() } },
                finish: {})
            let id = try #require(subscription)
            defer { store.changeMonitor.unsubscribe(id) }
            await store.changeMonitor.readStart(id)

            // Occupy every thread of the pool (as wide as the machine has cores) until released.
            let width = ProcessInfo.processInfo.activeProcessorCount
            let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
            for _ in 0..<width {
                Task.detached {
                    entered.signal()
                    _ = release.wait(timeout: .now() + 600)
                }
            }
            let path = directory.databasePath
            // Everything from here runs on a thread of its own: the pool is about to be full.
            let seen: Result<Bool, any Error> = await withCheckedContinuation { continuation in
                Thread {
                    defer { for _ in 0..<width { release.signal() } }
                    for _ in 0..<width where entered.wait(timeout: .now() + 240) == .timedOut {
                        return continuation.resume(returning: .failure(PoolNotBlocked()))
                    }
                    continuation.resume(
                        returning: Result {
                            // Another connection commits a change, logged as any store logs it.
                            let other = try Database(path: path, options: .init())
                            try other.inTransaction(.immediate) {
                                try other.frameworks.insert(Fixtures.framework("elsewhere"))
                                _ = try ChangeLogTable(db: other).append(
                                    [Change(kind: .framework, key: "elsewhere", operation: .insert)], committedAt: Date())
                            }
                            // Generous: the monitor polls every 100 ms; a loaded machine takes longer.
                            return delivered.wait(timeout: .now() + 30) == .success
                        })
                }.start()
            }
            #expect(try seen.get(), "the commit was not delivered while the pool was blocked")
        }
    }

    struct PoolNotBlocked: Error {}

    /// `.seconds(10_000_000_000)`, meant as "never", overflowed the timer's nanoseconds and
    /// trapped at the first observation.
    @Test("a poll interval beyond a year is a year, below 1 ms is 1 ms; observing with .seconds(Int64.max) works")
    func pollIntervalIsBounded() async throws {
        let year = 365 * 86_400 * 1_000_000_000
        #expect(ChangeMonitor.timerNanoseconds(.seconds(10_000_000_000)) == year)
        #expect(ChangeMonitor.timerNanoseconds(.seconds(Int64.max)) == year)
        #expect(ChangeMonitor.timerNanoseconds(.milliseconds(100)) == 100_000_000)
        #expect(ChangeMonitor.timerNanoseconds(.microseconds(1_500_250)) == 1_500_250_000)
        #expect(ChangeMonitor.timerNanoseconds(.zero) == 1_000_000)
        #expect(ChangeMonitor.timerNanoseconds(.seconds(-5)) == 1_000_000)
        var configuration = Store.Configuration()
        configuration.observationPollInterval = .seconds(Int64.max)
        try await withTemporaryStore(configuration: configuration) { store, _ throws in
            for try await frameworks in store.frameworks.observeAll() {
                #expect(frameworks.isEmpty)
                break
            }
        }
    }
}
