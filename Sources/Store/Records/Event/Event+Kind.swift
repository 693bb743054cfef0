import Foundation

// Events as a kind: how the generic layers read, sync, export and observe them.

/// The event kind's handler (see `TableBackedKind`). Its changes carry their dates.
struct EventKind: TableBackedKind {
    var kind: RecordKind { .event }
    var observedTables: [ObservedKindTable] {
        [ObservedKindTable(.event, ObservedTable(table: "events", keyColumn: "id", dateColumn: "date"))]
    }

    func decode(_ fields: inout FeedFields) -> Event? { Event.decode(&fields) }
    func table(_ db: Database) -> EventTable { db.events }
    func feedValue(of record: Event) -> JSONValue { record.jsonValue }
}

/// An event is a `StoreRecord` too (one row of `events`), so the generic API works for it
/// (`db.records(Event.self)`); sync and export use its own table's statements (`EventKind`).
extension Event: StoreRecord {
    /// `.event`.
    public static var kind: RecordKind { .event }
    /// `events`.
    public static var table: String { "events" }
    /// The columns of `events`, the id first.
    public static var columns: [String] { ["id", "title", "date", "notes"] }
    /// The `events` table, whose changes carry their dates.
    public static var observedTables: [ObservedTable] { [ObservedTable(table: "events", keyColumn: "id", dateColumn: "date")] }
    /// The id.
    public var key: String { id }
    /// Id, title, date (`YYYY-MM-DD`) and notes (null when absent), in `columns` order.
    public var columnValues: [SQLValue] {
        [.text(id), .text(title), .text(date.description), notes.map(SQLValue.text) ?? .null]
    }

    /// An event from its stored row; a date that is not a calendar date is an error.
    public init(columnValues values: [SQLValue]) throws {
        let id = values[0].textValue ?? ""
        guard let text = values[2].textValue, let date = CalendarDate(text) else {
            throw StoreError.invalidRecord(kind: .event, key: id, field: "date", reason: "not a calendar date in the database")
        }
        self.init(id: id, title: values[1].textValue ?? "", date: date, notes: values[3].textValue)
    }

    /// The feed shape: `jsonValue`.
    public var feedValue: JSONValue { jsonValue }

    /// Reads an event from its feed object (the id already read and checked into `fields.key`).
    public static func decode(_ fields: inout FeedFields) -> Event? {
        let title = fields.string("title")
        let date = fields.calendarDate("date")
        let notes = fields.optionalString("notes")
        guard let title, let date, notes.valid else { return nil }
        return Event(id: fields.key, title: title, date: date, notes: notes.value)
    }

    /// The event in the feed's shape (<doc:FeedFormat>), as export writes it.
    public var jsonValue: JSONValue {
        var members = [
            JSONMember("id", .string(id)), JSONMember("title", .string(title)),
            JSONMember("date", .string(date.description)),
        ]
        if let notes { members.append(JSONMember("notes", .string(notes))) }
        return .object(members)
    }
}

extension Feed {
    /// The feed's events, in document order.
    public var events: [Event] { records(of: Event.self) }
}
