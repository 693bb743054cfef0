/// A calendar event on one day.
public struct Event: Sendable, Codable, Equatable, Hashable, Identifiable {
    public var id: String
    public var title: String
    public var date: CalendarDate
    public var notes: String?

    public init(id: String, title: String, date: CalendarDate, notes: String? = nil) {
        self.id = id
        self.title = title
        self.date = date
        self.notes = notes
    }
}
