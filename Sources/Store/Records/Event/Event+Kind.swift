import Foundation

// Events as a kind: how the generic layers read, sync, export and observe them.

/// The event kind's handler (see `RecordKindHandler`). Its changes carry their dates.
struct EventKind: RecordKindHandler {
    var kind: RecordKind { .event }
    var observedTables: [ObservedKindTable] {
        [ObservedKindTable(.event, ObservedTable(table: "events", keyColumn: "id", dateColumn: "date"))]
    }

    func decode(_ fields: inout FeedFields) -> Event? { Event.decode(&fields) }
    func reconcile(_ record: Event, with reconciler: inout Reconciler) throws {
        try reconciler.reconcile(record, in: reconciler.db.events)
    }
    func tombstone(_ key: String, with reconciler: inout Reconciler) throws {
        try reconciler.tombstone(key, in: reconciler.db.events)
    }
    func forEachFeedValue(_ db: Database, includingData: Bool, _ body: (JSONValue) throws -> Void) throws {
        try db.events.forEachByID { try body($0.jsonValue) }
    }
    func feedValue(of key: String, in db: Database) throws -> JSONValue? { try db.events.find(key)?.jsonValue }
    func feedValue(of record: Event) -> JSONValue { record.jsonValue }
}

extension Event {
    /// Reads an event from its feed object (the id already read and checked).
    static func decode(_ fields: inout FeedFields) -> Event? {
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
