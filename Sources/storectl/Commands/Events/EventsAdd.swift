import ArgumentParser
import Store

struct EventsAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add an event; its id must be new.")

    @OptionGroup var store: StoreOptions
    @Option(help: "A new id (1 to 200 characters).") var id: String
    @Option(help: "Title.") var title: String
    @Option(help: "Its day, YYYY-MM-DD.") var date: String
    @Option(help: "Notes.") var notes: String?

    func validate() throws {
        if let problem = RecordKind.idProblem(id) { throw ValidationError("--id: \(problem)") }
        _ = try parseDate(date, name: "--date")
    }

    func run() async throws {
        let event = Event(id: id, title: title, date: try parseDate(date, name: "--date"), notes: notes)
        let opened = try await store.open()
        try await withStoreErrors(store.resolvedPath) { try await opened.events.insert(event) }
        Output.print("added event \(id) on \(event.date)")
    }
}
