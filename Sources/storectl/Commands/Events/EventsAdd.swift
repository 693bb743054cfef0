import ArgumentParser
import Store

struct EventsAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an event; its id must be new.")

    @OptionGroup var store: StoreOptions
    @Option(help: "A new id (1 to 200 characters).") var id: String
    @Option(help: "Title.") var title: String
    @Option(help: ArgumentHelp("Its day.", valueName: "YYYY-MM-DD"), transform: CalendarDate.parse) var date: CalendarDate
    @Option(help: "Notes.") var notes: String?

    func validate() throws {
        if let problem = RecordKind.idProblem(id) { throw ValidationError("--id: \(problem)") }
    }

    func run() async throws {
        let event = Event(id: id, title: title, date: date, notes: notes)
        try await store.withStore(.creating) { try await $0.events.insert(event) }
        Output.print("added event \(id) on \(event.date)")
    }
}
