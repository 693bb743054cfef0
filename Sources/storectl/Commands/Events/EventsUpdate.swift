import ArgumentParser
import Store

struct EventsUpdate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "update", abstract: "Change fields of an existing event.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The event's id.") var id: String
    @Option(help: "New title.") var title: String?
    @Option(help: ArgumentHelp("New day.", valueName: "YYYY-MM-DD"), transform: CalendarDate.parse) var date: CalendarDate?
    @Option(help: "New notes.") var notes: String?

    func validate() throws {
        if title == nil && date == nil && notes == nil {
            throw ValidationError("nothing to update: give at least one of --title, --date, --notes")
        }
    }

    func run() async throws {
        let (id, title, date, notes) = (id, title, date, notes)
        let event = try await store.withStore(.existing) { opened in
            // Read and write in one transaction, so a concurrent change is not overwritten with stale fields.
            try await opened.write { db in
                guard var event = try db.events.find(id) else { throw StoreError.recordNotFound(kind: .event, key: id) }
                if let title { event.title = title }
                if let date { event.date = date }
                if let notes { event.notes = notes }
                try db.events.update(event)
                return event
            }
        }
        Output.print("updated event \(id) on \(event.date)")
    }
}
