import ArgumentParser
import Store

struct EventsDates: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dates", abstract: "The dates of a month that have events, with counts.")

    @OptionGroup var store: StoreOptions
    @Option(help: "The month, YYYY-MM.") var month: String
    @Flag(help: "Print a JSON array of {date, count}.") var json = false

    func validate() throws { _ = try parseMonth(month, name: "--month") }

    func run() async throws {
        let month = try parseMonth(month, name: "--month")
        let opened = try await store.open(existing: true)
        let dates = try await withStoreErrors(store.resolvedPath) { try await opened.events.dates(in: month) }
        if json { return Output.printJSON(.array(dates.map(\.jsonValue))) }
        var table = Table("DATE", "EVENTS", rightAligned: [1])
        for entry in dates { table.append(entry.date.description, String(entry.count)) }
        Output.print(table.render())
    }
}
