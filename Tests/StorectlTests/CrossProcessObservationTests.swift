import Foundation
import Store
import Testing

/// Observation across processes: a change committed by a `storectl` process reaches a store's
/// observers in this process. How fast is the benchmark's business (`Benchmarks/run.sh`, the
/// `observation-latency` row, measured from each commit's own timestamp); here, only that it
/// arrives, whole and once.
@Suite("Observation of changes made by another storectl process")
struct CrossProcessObservationTests {
    @Test func aChangeByAnotherStorectlProcessArrivesInChanges() async throws {
        let cli = try Storectl()
        let store = try await Store.open(at: cli.db)
        defer { Task { await store.close() } }
        let changes = StreamProbe(await store.changesFromNow())
        let result = try await cli.run(["events", "add", "--id", "cli", "--title", "From the CLI", "--date", "2026-02-28"])
        #expect(result.status == 0, "\(result)")
        let batch = try await changes.next()
        #expect(batch.changes == [Change(kind: .event, key: "cli", operation: .insert, dates: [CalendarDate("2026-02-28")!])])
        #expect(try await changes.untakenAfterWaiting(0.3).isEmpty)
        await store.close()
    }

    @Test func aFrameworkAddedByStorectlArrivesInObserveAll() async throws {
        let cli = try Storectl()
        let store = try await Store.open(at: cli.db)
        let all = StreamProbe(store.frameworks.observeAll())
        #expect(try await all.next() == [])
        let result = try await cli.run(
            [
                "frameworks", "add", "--id", "cli", "--name", "From the CLI", "--image-name", "cli",
                "--url", "https://example.com/cli", "--description", "Added by another process.",
            ])
        #expect(result.status == 0, "\(result)")
        let value = try await all.next()
        #expect(value.map(\.id) == ["cli"])
        #expect(value.first?.name == "From the CLI")
        await store.close()
    }
}
