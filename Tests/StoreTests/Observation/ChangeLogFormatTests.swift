import Foundation
import Testing

@testable import Store

/// The `change_log.changes` text: what the writer logs and observers (here and in other
/// processes, older ones included) read back.
@Suite("Change log format")
struct ChangeLogFormatTests {
    static let mixed: [Change] = [
        Change(kind: .framework, key: "a", operation: .insert),
        Change(kind: .framework, key: "quote \" backslash \\ tab \t nul \u{0} é 🦆", operation: .insert),
        Change(kind: .framework, key: "c", operation: .update),
        Change(
            kind: .event, key: "e-1", operation: .update,
            dates: [CalendarDate("2026-06-08")!, CalendarDate("2026-06-09")!]),
        Change(kind: .framework, key: "d", operation: .update),
        Change(kind: .image, key: "https://example.com/i.png", operation: .insert),
        Change(kind: .order, key: "o", operation: .delete),
    ]

    @Test func readsBackEveryChangeInOrder() {
        #expect(ChangeLogTable.changes(in: Data(ChangeLogTable.encode(ChangeList(Self.mixed)))) == Self.mixed)
        #expect(ChangeLogTable.changes(in: Data(ChangeLogTable.encode([]))).isEmpty)
        // What it does not understand (a later version's element, a damaged row) it skips. A kind
        // it does not know is an app's (kinds are open) and is read like any other.
        let unknown =
            #"[{"kind":"framework","operation":"insert","keys":["a"]},{"kind":"tag","key":"t","operation":"insert"},{"kind":"tag","key":"u","operation":"rename"},3]"#
        #expect(
            ChangeLogTable.changes(in: Data(unknown.utf8)) == [
                Change(kind: .framework, key: "a", operation: .insert),
                Change(kind: RecordKind(rawValue: "tag"), key: "t", operation: .insert),
            ])
        #expect(ChangeLogTable.changes(in: Data("not json".utf8)).isEmpty)
    }

    /// An event's one date is kept packed in its entry, two or more aside: every date comes back
    /// as it went in, the calendar's first and last days included, also after a replace.
    @Test func everyDateComesBackFromTheChangeList() {
        let first = CalendarDate("0001-01-01")!, last = CalendarDate("9999-12-31")!
        let changes: [Change] = [
            Change(kind: .event, key: "a", operation: .insert, dates: [first]),
            Change(kind: .event, key: "b", operation: .update, dates: [last, first]),
            Change(kind: .event, key: "c", operation: .delete, dates: [last]),
            Change(kind: .framework, key: "f", operation: .insert),
            Change(kind: .event, key: "d", operation: .update, dates: [CalendarDate("2024-02-29")!]),
        ]
        var list = ChangeList(changes)
        #expect(Array(list) == changes)
        #expect(ChangeLogTable.changes(in: Data(ChangeLogTable.encode(list))) == changes)
        let moved = Change(kind: .event, key: "a", operation: .update, dates: [first, last])
        list.replace(at: 0, with: moved)
        list.replace(at: 1, with: changes[2])
        #expect(Array(list) == [moved, changes[2]] + changes[2...])
        list.removeLast(from: 1)
        list.append(changes[1])
        #expect(Array(list) == [moved, changes[1]])
    }

    /// The text is sized before it is written, so its buffer never grows: grown by doubling,
    /// it held two copies at once at a large sync's commit (1,000,000 events: 48 MB and 96 MB
    /// side by side), where a guess of 24 bytes a change was a third of an event's element.
    /// Here, not by a peak: a mapped buffer grows in place, and `SyncMemoryTests` counts large
    /// blocks as they are live.
    @Test func theTextIsSizedBeforeItIsWritten() {
        var changes: [Change] = []
        let operations: [Change.Operation] = [.insert, .update, .delete]
        for index in 0..<10_000 {
            let day = CalendarDate("2026-06-\(10 + index % 19)")!
            let dates = index % 10 == 0 ? [day, CalendarDate("2027-01-01")!] : [day]
            changes.append(Change(kind: .event, key: "event-\(index)", operation: operations[index % 3], dates: dates))
        }
        for index in 0..<10_000 {
            changes.append(Change(kind: .framework, key: "framework-\(index)", operation: .insert))
        }
        let list = ChangeList(changes)
        let written = ChangeLogTable.encode(list).count
        let estimate = ChangeLogTable.estimatedSize(of: list)
        #expect(estimate >= written, "estimated \(estimate) bytes, written \(written)")
        #expect(estimate < written + written / 4, "estimated \(estimate) bytes, written \(written)")
        #expect(ChangeLogTable.changes(in: Data(ChangeLogTable.encode(list))) == changes)
    }

    @Test func consecutiveChangesOfOneKindAndOperationShareAnElement() throws {
        let text = String(decoding: ChangeLogTable.encode(ChangeList(Self.mixed)), as: UTF8.self)
        guard case .array(let elements) = try JSONParser.parse(Data(text.utf8)) else {
            Issue.record("not an array: \(text)")
            return
        }
        // a+quote (insert), c (update), e-1 (event), d (update again after the event), image, order.
        #expect(elements.count == 6, "\(text)")
        #expect(elements[0]["keys"] == .array([.string("a"), .string(Self.mixed[1].key)]))
        #expect(elements[2]["key"] == .string("e-1"))
        #expect(elements[2]["dates"] == .array([.string("2026-06-08"), .string("2026-06-09")]))
    }

    @Test func sqliteReadsTheTextAsValidJSON() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.write { db in
                try db.frameworks.insert(Fixtures.framework("x\"y"))
                try db.frameworks.insert(Fixtures.framework("z"))
            }
            let keys = try await store.read { db in
                try db.query("SELECT value FROM change_log, json_each(changes, '$[0].keys')") { $0.text(0) }
            }
            #expect(keys == ["x\"y", "z"])
        }
    }

    /// Rows logged before grouping (one element per change) stay readable after an upgrade.
    @Test func readsRowsWrittenOneElementPerChange() async throws {
        try await withTemporaryStore { store, _ throws in
            let old =
                #"[{"kind":"framework","key":"a","operation":"insert"},"#
                + #"{"kind":"event","key":"e","operation":"delete","dates":["2026-06-08"]}]"#
            try await store.write { db in
                try db.execute("INSERT INTO change_log (committed_at, changes) VALUES ('2026-01-01T00:00:00Z', ?)", [.text(old)])
            }
            let batches = try await store.read { try ChangeLogTable(db: $0).batches(after: 0) }
            #expect(
                batches.map(\.changes) == [
                    [
                        Change(kind: .framework, key: "a", operation: .insert),
                        Change(kind: .event, key: "e", operation: .delete, dates: [CalendarDate("2026-06-08")!]),
                    ]
                ])
        }
    }
}
