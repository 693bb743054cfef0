import Foundation
import Store

/// A reminder: the fifth record kind, defined outside the library. A feed carries reminders in
/// a top-level `reminders` array and deletes them under `deleted.reminders`.
public struct Reminder: StoreRecord, Equatable {
    public var id: String
    public var title: String
    public var due: CalendarDate
    public var done: Bool

    public init(id: String, title: String, due: CalendarDate, done: Bool) {
        self.id = id
        self.title = title
        self.due = due
        self.done = done
    }

    public static let kind = RecordKind(rawValue: "reminder")
    public static let table = "reminders"
    public static let columns = ["id", "title", "due", "done"]

    public var key: String { id }

    public var columnValues: [SQLValue] { [.text(id), .text(title), .text(due.description), .integer(done ? 1 : 0)] }

    public init(columnValues values: [SQLValue]) throws {
        guard let id = values[0].textValue, let title = values[1].textValue,
            let due = values[2].textValue.flatMap(CalendarDate.init), let done = values[3].integerValue
        else {
            throw StoreError.invalidRecord(
                kind: Self.kind, key: values[0].textValue ?? "?", field: "due",
                reason: "the stored row is not a reminder")
        }
        self.init(id: id, title: title, due: due, done: done != 0)
    }

    /// `{"id": "r1", "title": "Buy milk", "due": "2026-11-24", "done": false}`; the title must
    /// not be empty.
    public static func decode(_ fields: inout FeedFields) -> Reminder? {
        let id = fields.string("id")
        var title = fields.string("title")
        if title?.trimmingCharacters(in: .whitespaces).isEmpty == true {
            fields.problem("title", "must not be empty")
            title = nil
        }
        let due = fields.calendarDate("due")
        let done = fields.bool("done")
        guard let id, let title, let due, let done else { return nil }
        return Reminder(id: id, title: title, due: due, done: done)
    }

    public var feedValue: JSONValue {
        .object(["id": .string(id), "title": .string(title), "due": .string(due.description), "done": .bool(done)])
    }
}
