/// Calendar events inside a transaction: `try db.events.on(date)`.
///
/// Every date query is a range scan of the `events_by_date` index.
public struct EventTable {
    let db: Database

    private static let columns = "id, title, date, notes"

    static func decode(_ row: some RowReader) throws -> Event {
        let id = row.text(0)
        return Event(id: id, title: row.text(1), date: try date(row.text(2), id: id), notes: row.optionalText(3))
    }

    /// A stored date; a row written by another tool around the CHECK is an error, not a crash.
    private static func date(_ text: String, id: String) throws -> CalendarDate {
        guard let date = CalendarDate(text) else {
            throw StoreError.invalidRecord(
                kind: .event, key: id, field: "date", reason: "'\(text)' in the database is not a calendar date")
        }
        return date
    }

    /// The query of `fetchAll`, and how `decode` reads its columns.
    static let fetchAllQuery = "SELECT \(columns) FROM events ORDER BY date, id"
    static let fetchAllColumns: [ColumnCopy] = [.text, .text, .text, .optionalText]

    /// Every event, ordered by date then id.
    public func fetchAll() throws -> [Event] {
        try db.query(Self.fetchAllQuery, [], Self.decode)
    }

    /// Every event, ordered by date then id as `fetchAll` orders them, handed to `body` one at
    /// a time as a cursor steps: none is kept, so a table of any size is read in bounded memory.
    /// With `from` or `through`, only the events of those days (both included); `from` after
    /// `through` throws `StoreError.invalidRecord` naming both days (it returned nothing, as if
    /// there were no events).
    ///
    /// `body` runs inside the `read` or `write` closure this is called from, on its connection;
    /// an error it throws ends the walk and is rethrown. The task's cancellation is checked
    /// every few hundred rows (`CancellationError`).
    public func fetchEach(
        from first: CalendarDate? = nil, through last: CalendarDate? = nil, _ body: (Event) throws -> Void
    ) throws {
        if let first, let last, last < first {
            throw StoreError.invalidRecord(
                kind: .event, key: "", field: "from, through",
                reason: "\(first) is after \(last): a range runs from a day through the same day or a later one")
        }
        var conditions: [String] = [], arguments: [SQLValue] = []
        if let first {
            conditions.append("date >= ?")
            arguments.append(.text(first.description))
        }
        if let last {
            conditions.append("date <= ?")
            arguments.append(.text(last.description))
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        try db.forEachRow("SELECT \(Self.columns) FROM events\(filter) ORDER BY date, id", arguments) {
            try body(try Self.decode($0))
        }
    }

    /// Every event, ordered by id (bytewise), one at a time from a cursor (none is kept): the
    /// key order sync, export and publish walk in.
    func forEachRecord(_ body: (Event) throws -> Void) throws {
        try db.forEachRow("SELECT \(Self.columns) FROM events ORDER BY id") { try body(try Self.decode($0)) }
    }

    /// The event with this id, or nil.
    public func find(_ id: String) throws -> Event? {
        let statement = try db.cachedStatement(literal: "SELECT id, title, date, notes FROM events WHERE id = ?")
        try statement.bind(id, at: 1)
        defer { statement.reset() }
        return try statement.step() ? Self.decode(statement) : nil
    }

    /// The number of events.
    public func count() throws -> Int {
        try db.query("SELECT count(*) FROM events") { $0.int(0) }[0]
    }

    /// The events of one day, ordered by id.
    public func on(_ date: CalendarDate) throws -> [Event] {
        var events: [Event] = []
        try fetchEach(from: date, through: date) { events.append($0) }
        return events
    }

    /// The events of one month, ordered by date then id.
    public func inMonth(_ month: YearMonth) throws -> [Event] {
        var events: [Event] = []
        try fetchEach(from: month.firstDay, through: month.lastDay) { events.append($0) }
        return events
    }

    /// The days of a month that have events, with how many each, in date order.
    public func dates(in month: YearMonth) throws -> [DateCount] {
        try db.query(
            "SELECT date, count(*), min(id) FROM events WHERE date >= ? AND date <= ? GROUP BY date ORDER BY date",
            [.text(month.firstDay.description), .text(month.lastDay.description)]
        ) { DateCount(date: try Self.date($0.text(0), id: $0.text(2)), count: $0.int(1)) }
    }

    /// Inserts a new event; `StoreError.recordExists` if its id is taken.
    public func insert(_ event: Event) throws {
        try event.validate()
        do {
            _ = try db.recordingInsert(of: .event, key: event.id, dates: [event.date]) {
                try db.execute("INSERT INTO events (\(Self.columns)) VALUES (?, ?, ?, ?)", arguments(event))
                return true
            }
        } catch let error as SQLiteError where error.extendedCode == SQLiteError.constraintPrimaryKey {
            throw StoreError.recordExists(kind: .event, key: event.id)
        }
    }

    /// Inserts the event unless one with its id exists (then nothing changes); true if it was
    /// inserted.
    @discardableResult
    public func insertIfAbsent(_ event: Event) throws -> Bool {
        try event.validate()
        let statement = try db.cachedStatement(
            literal: "INSERT INTO events (id, title, date, notes) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING")
        return try db.recordingInsert(of: .event, key: event.id, dates: [event.date]) {
            try Self.withFields(of: event, boundTo: statement) {
                defer { statement.reset() }
                _ = try statement.step()
            }
            return db.changes == 1
        }
    }

    /// Binds id, title, date and notes to parameters 1 to 4 (the texts read in place) while
    /// `body` runs (which steps the statement).
    static func withFields<T>(of event: Event, boundTo statement: Statement, _ body: () throws -> T) throws -> T {
        try statement.bind(event.date.description, at: 3)
        try statement.bind(event.notes, at: 4)
        return try statement.withText(event.id, at: 1) { try statement.withText(event.title, at: 2, body) }
    }

    /// Replaces an existing event; `StoreError.recordNotFound` if there is none. A moved event
    /// reports both its old and its new date as changed.
    public func update(_ event: Event) throws {
        try event.validate()
        guard try find(event.id) != nil else { throw StoreError.recordNotFound(kind: .event, key: event.id) }
        try db.execute(
            "UPDATE events SET title = ?, date = ?, notes = ? WHERE id = ?",
            Array(arguments(event).dropFirst()) + [.text(event.id)])
    }

    /// Deletes the event with this id; false if there was none.
    @discardableResult
    public func delete(_ id: String) throws -> Bool {
        let dates = try db.query("DELETE FROM events WHERE id = ? RETURNING date", [.text(id)]) {
            try Self.date($0.text(0), id: id)
        }
        guard !dates.isEmpty else { return false }
        return true
    }

    private func arguments(_ event: Event) -> [SQLValue] {
        [.text(event.id), .text(event.title), .text(event.date.description), event.notes.map(SQLValue.text) ?? .null]
    }
}

/// A day and how many events it has.
public struct DateCount: Sendable, Hashable, Codable {
    /// The day.
    public let date: CalendarDate
    /// How many events it has.
    public let count: Int

    /// A day and its number of events.
    public init(date: CalendarDate, count: Int) {
        self.date = date
        self.count = count
    }
}

extension Database {
    /// The events table, on this connection.
    public var events: EventTable { EventTable(db: self) }
}
