import Foundation
import Testing

@testable import Store

/// The sync history is bounded: the last `retainedHistory` syncs, and a stored report lists at
/// most `listedPerStoredReport` conflicts and image failures (its counts whole).
@Suite("Sync history retention")
struct SyncHistoryRetentionTests {
    private static func entry(_ index: Int, report: SyncReport? = nil) -> SyncHistoryEntry {
        SyncHistoryEntry(
            source: "/feeds/\(index).json", startedAt: Date(timeIntervalSince1970: Double(index)),
            finishedAt: Date(timeIntervalSince1970: Double(index)), policy: .keepExisting,
            outcome: report == nil ? .failed : .applied, report: report, error: report == nil ? "failed \(index)" : nil)
    }

    @Test("past the bound, each new entry removes the oldest; the newest are kept, in order")
    func keepsTheLastEntries() async throws {
        let extra = 50
        let total = Int(SyncStateTable.retainedHistory) + extra
        try await withTemporaryStore { store, _ throws in
            try await store.write { db in
                let state = SyncStateTable(db: db)
                for index in 0..<total { try state.appendHistory(Self.entry(index)) }
            }
            let count = try await store.read { try $0.integer("SELECT count(*) FROM sync_history") }
            #expect(count == SyncStateTable.retainedHistory)
            let history = try await store.syncHistory(limit: total)
            #expect(history.count == Int(SyncStateTable.retainedHistory))
            #expect(history.first?.source == "/feeds/\(total - 1).json")
            #expect(history.last?.source == "/feeds/\(extra).json")
        }
    }

    @Test("a stored report lists the first 100 conflicts and image failures; its counts stay whole")
    func storedListsAreCut() async throws {
        var report = SyncReport(status: .applied, source: "/feeds/a.json", policy: .threeWay)
        report.frameworks.kept = 150
        report.conflicts = (0..<150).map { Change(kind: .framework, key: "f\($0)", operation: .update) }
        report.images.failed = 120
        report.imageFailures = (0..<120).map { .init(url: "https://example.com/\($0).png", reason: "HTTP 404") }
        let entry = Self.entry(0, report: report)
        try await withTemporaryStore { store, _ throws in
            try await store.write { db in _ = try SyncStateTable(db: db).appendHistory(entry) }
            let stored = try #require(try await store.syncHistory().first?.reportJSON)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(stored.utf8)) as? [String: Any])
            #expect((object["conflicts"] as? [Any])?.count == 100)
            #expect((object["imageFailures"] as? [Any])?.count == 100)
            #expect(((object["frameworks"] as? [String: Any])?["kept"] as? Int) == 150)
            #expect(((object["images"] as? [String: Any])?["failed"] as? Int) == 120)
        }
    }
}
