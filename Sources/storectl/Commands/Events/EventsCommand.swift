import ArgumentParser
import Store

struct EventsCommand: CommandGroup {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "List, show, add, update and delete calendar events; see which dates have them.",
        subcommands: [
            EventsList.self, EventsShow.self, EventsAdd.self, EventsUpdate.self, EventsDelete.self, EventsDates.self,
            EventsCalendar.self,
        ]
    )
}
