import ArgumentParser
import Store

struct EventsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List events by date, all or of one day or month.")

    @OptionGroup var store: StoreOptions
    @Option(help: "Only this day, YYYY-MM-DD.") var date: String?
    @Option(help: "Only this month, YYYY-MM.") var month: String?
    @Flag(help: "Print a JSON array of feed-shaped events.") var json = false

    func validate() throws {
        if date != nil && month != nil { throw ValidationError("give --date or --month, not both") }
        if let date { _ = try parseDate(date, name: "--date") }
        if let month { _ = try parseMonth(month, name: "--month") }
    }

    func run() async throws {
        let opened = try await store.open(existing: true)
        let events = try await withStoreErrors(store.resolvedPath) {
            if let date { return try await opened.events.on(try parseDate(date, name: "--date")) }
            if let month { return try await opened.events.inMonth(try parseMonth(month, name: "--month")) }
            return try await opened.events.fetchAll()
        }
        if json { return Output.printJSON(.array(events.map(\.jsonValue))) }
        var table = Table("DATE", "ID", "TITLE", "NOTES")
        for event in events { table.append(event.date.description, event.id, event.title, event.notes ?? "") }
        Output.print(table.render())
    }
}
