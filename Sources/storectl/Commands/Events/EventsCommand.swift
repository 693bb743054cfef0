import ArgumentParser
import Store

struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "List, show, add, update and delete calendar events; see which dates have them.",
        subcommands: [EventsList.self, EventsShow.self, EventsAdd.self, EventsUpdate.self, EventsDelete.self, EventsDates.self, EventsCalendar.self]
    )
}

/// Parses YYYY-MM for an option or argument, naming it in the error.
func parseMonth(_ text: String, name: String) throws -> YearMonth {
    guard let month = YearMonth(text) else { throw ValidationError("\(name): '\(text)' is not a month YYYY-MM") }
    return month
}

/// Parses YYYY-MM-DD for an option or argument, naming it in the error.
func parseDate(_ text: String, name: String) throws -> CalendarDate {
    guard let date = CalendarDate(text) else {
        throw ValidationError("\(name): '\(text)' is not a calendar date YYYY-MM-DD (or that day does not exist)")
    }
    return date
}
