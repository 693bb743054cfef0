import ArgumentParser
import Store

struct EventsUpdate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "update", abstract: "Change fields of an existing event.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The event's id.") var id: String
    @Option(help: "New title.") var title: String?
    @Option(help: "New day, YYYY-MM-DD.") var date: String?
    @Option(help: "New notes.") var notes: String?

    func validate() throws {
        if title == nil && date == nil && notes == nil {
            throw ValidationError("nothing to update: give at least one of --title, --date, --notes")
        }
        if let date { _ = try parseDate(date, name: "--date") }
    }

    func run() async throws {
        let newDate = try date.map { try parseDate($0, name: "--date") }
        let opened = try await store.open()
        let (id, title, notes) = (id, title, notes)
        let event = try await withStoreErrors(store.resolvedPath) {
            // Read and write in one transaction, so a concurrent change is not overwritten with stale fields.
            try await opened.write { db in
                guard var event = try db.events.find(id) else { throw StoreError.recordNotFound(kind: .event, key: id) }
                if let title { event.title = title }
                if let newDate { event.date = newDate }
                if let notes { event.notes = notes }
                try db.events.update(event)
                return event
            }
        }
        Output.print("updated event \(id) on \(event.date)")
    }
}
