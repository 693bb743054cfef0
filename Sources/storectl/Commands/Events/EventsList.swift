import ArgumentParser
import Store

struct EventsList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List events by date, all or of one day or month.")

    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("Only this day.", valueName: "YYYY-MM-DD"), transform: CalendarDate.parse) var date: CalendarDate?
    @Option(help: ArgumentHelp("Only this month.", valueName: "YYYY-MM")) var month: YearMonth?
    @Flag(help: "Print a JSON array of feed-shaped events.") var json = false

    func validate() throws {
        if date != nil && month != nil { throw ValidationError("give --date or --month, not both") }
    }

    static let listing = RecordListing<Event>(
        table: Table("DATE", "ID", "TITLE", "NOTES", whole: [1]),
        cells: { [$0.date.description, $0.id, $0.title, $0.notes ?? ""] },
        json: \.jsonValue)

    func run() async throws {
        let (first, last) = date.map { ($0, $0) } ?? month.map { ($0.firstDay, $0.lastDay) } ?? (nil, nil)
        let json = json
        try await store.withStore(.existing) { opened in
            try await Self.listing.print(from: opened, asJSON: json) { db, body in
                try db.events.fetchEach(from: first, through: last, body)
            }
        }
    }
}
