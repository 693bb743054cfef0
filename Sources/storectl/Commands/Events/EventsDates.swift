import ArgumentParser
import Store

struct EventsDates: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dates", abstract: "The dates of a month that have events, with counts.")

    @OptionGroup var store: StoreOptions
    @Option(help: ArgumentHelp("The month.", valueName: "YYYY-MM")) var month: YearMonth
    @Flag(help: "Print a JSON array of {date, count}.") var json = false

    func run() async throws {
        let month = month
        let dates = try await store.withStore(.existing) { try await $0.events.dates(in: month) }
        if json { return Output.printJSON(.array(dates.map(\.jsonValue))) }
        var table = Table("DATE", "EVENTS", rightAligned: [1])
        for entry in dates { table.append(entry.date.description, String(entry.count)) }
        Output.print(table.render())
    }
}
