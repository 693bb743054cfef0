/// A calendar event on one day.
public struct Event: Sendable, Codable, Equatable, Hashable, Identifiable {
    public var id: String
    /// What it is called.
    public var title: String
    /// The day it happens on.
    public var date: CalendarDate
    /// Free text, if any.
    public var notes: String?

    /// An event on `date`.
    public init(id: String, title: String, date: CalendarDate, notes: String? = nil) {
        self.id = id
        self.title = title
        self.date = date
        self.notes = notes
    }
}
