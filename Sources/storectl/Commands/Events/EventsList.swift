import ArgumentParser
import Store

struct EventsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List events by date, all or of one day or month.")

    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("Only this day.", valueName: "YYYY-MM-DD")) var date: CalendarDate?
    @Option(help: ArgumentHelp("Only this month.", valueName: "YYYY-MM")) var month: YearMonth?
    @Flag(help: "Print a JSON array of feed-shaped events.") var json = false

    func validate() throws {
        if date != nil && month != nil { throw ValidationError("give --date or --month, not both") }
    }

    func run() async throws {
        let (date, month) = (date, month)
        let events = try await store.withStore(.existing) { opened in
            if let date { return try await opened.events.on(date) }
            if let month { return try await opened.events.inMonth(month) }
            return try await opened.events.fetchAll()
        }
        if json { return Output.printJSON(.array(events.map(\.jsonValue))) }
        var table = Table("DATE", "ID", "TITLE", "NOTES")
        for event in events { table.append(event.date.description, event.id, event.title, event.notes ?? "") }
        Output.print(table.render())
    }
}
