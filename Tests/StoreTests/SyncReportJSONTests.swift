import Foundation
import Testing

@testable import Store

/// `SyncReport.writeJSON` writes, in pieces, the bytes `JSONWriter` gives `report.jsonValue`
/// whole: `storectl sync --json` prints the report through it (so that a report of half a million
/// conflicts is never held as one tree or one text), the sync history stores `jsonValue`, and the
/// two must never differ, for any report, in either layout.
@Suite("Sync report JSON written in pieces")
struct SyncReportJSONTests {
    /// Text that only escaping keeps valid JSON: quotes, a backslash, control characters, and
    /// characters that are not ASCII (written as UTF-8).
    static let awkward = "a \"quoted\" back\\slash\n\ttab \u{01} é 🙂 \u{2028}"

    /// Reports that together have every member `jsonValue` can write, each list empty, of one
    /// element and of several.
    static var reports: [(name: String, report: SyncReport)] {
        var upToDate = SyncReport(status: .upToDate, source: "https://example.com/feed.json", policy: .keepExisting)
        upToDate.published = PublishedSyncDetails(generation: "g-1", fromSequence: 4, toSequence: 4)

        var applied = SyncReport(status: .applied, source: "/feeds/\(awkward).json", policy: .preferRemote)
        applied.frameworks.inserted = 3
        applied.frameworks.updated = 1_000_000
        applied.orders.deleted = 2
        applied.events.kept = 7
        applied.events.unchanged = 12
        applied[RecordKind(rawValue: "note")] = {
            var counts = SyncReport.Counts()
            counts.inserted = 5
            return counts
        }()
        applied[RecordKind(rawValue: "bookmark")] = SyncReport.Counts()
        applied.images.stored = 1
        applied.images.alreadyCached = 2
        applied.images.downloaded = 3
        applied.images.failed = 2
        applied.images.deleted = 4
        applied.imageFailures = [
            SyncReport.ImageFailure(url: "https://example.com/a.png", reason: "HTTP 404"),
            SyncReport.ImageFailure(url: "https://example.com/\(awkward).png", reason: awkward),
        ]
        applied.published = PublishedSyncDetails(
            generation: "g-2", fromSequence: nil, toSequence: 9, filesFetched: 3, bytesFetched: 12_345,
            fullSyncReason: awkward)
        applied.unrecorded = "disk I/O error: \(awkward)"

        var conflicts = SyncReport(status: .dryRun, source: "-", policy: .threeWay)
        conflicts.frameworks.kept = 1000
        conflicts.conflicts = (0..<1000).map { index in
            Change(kind: index.isMultiple(of: 3) ? .event : .framework, key: "f-\(index)", operation: .update)
        }
        conflicts.conflicts.append(Change(kind: .order, key: awkward, operation: .update))

        var oneOfEach = SyncReport(status: .applied, source: "/f.json", policy: .threeWay)
        oneOfEach.conflicts = [Change(kind: .framework, key: "only", operation: .update)]
        oneOfEach.images.failed = 1
        oneOfEach.imageFailures = [SyncReport.ImageFailure(url: "https://example.com/x", reason: "timed out")]
        oneOfEach.unrecorded = "database or disk is full"

        return [
            ("empty", SyncReport(status: .applied, source: "", policy: .keepExisting)),
            ("up to date", upToDate), ("applied, every member", applied), ("1,001 conflicts", conflicts),
            ("one of each list", oneOfEach),
        ]
    }

    @Test("writeJSON's pieces are JSONWriter's text of jsonValue, byte for byte", arguments: [true, false])
    func piecesMatchTheWholeReport(pretty: Bool) throws {
        let writer = JSONWriter(pretty: pretty)
        for (name, report) in Self.reports {
            var pieces: [String] = []
            try report.writeJSON(writer) { pieces.append($0) }
            let whole = writer.string(report.jsonValue)
            #expect(pieces.joined() == whole, "\(name)")
            // Written a conflict at a time: no piece holds the list.
            if report.conflicts.count > 1 { #expect(pieces.count > report.conflicts.count, "\(name)") }
            // Still JSON, and the same document.
            #expect(try JSONParser.parse(Data(pieces.joined().utf8)) == report.jsonValue, "\(name)")
        }
    }

    @Test("an error from write ends the writing: nothing more is written")
    func aFailingWriteStops() {
        struct Full: Error {}
        var report = SyncReport(status: .applied, source: "/f.json", policy: .threeWay)
        report.conflicts = (0..<10).map { Change(kind: .framework, key: "k\($0)", operation: .update) }
        var calls = 0
        #expect(throws: Full.self) {
            try report.writeJSON(JSONWriter()) { _ in
                calls += 1
                if calls == 3 { throw Full() }
            }
        }
        #expect(calls == 3)
    }
}
