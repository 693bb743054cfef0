import ArgumentParser
import Store

struct EventsCalendar: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "calendar",
        abstract: "A month grid, Monday first; days with events are marked with *."
    )

    @OptionGroup var store: StoreOptions
    @Argument(help: ArgumentHelp("The month.", valueName: "YYYY-MM")) var month: YearMonth

    func run() async throws {
        let month = month
        let dates = try await store.withStore(.existing) { try await $0.events.dates(in: month) }
        Output.print(Self.render(month, counts: Dictionary(uniqueKeysWithValues: dates.map { ($0.date.day, $0.count) })))
    }

    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August",
        "September", "October", "November", "December",
    ]

    /// Each day is four columns wide: the day number right-aligned in three, then `*` if it has events.
    static func render(_ month: YearMonth, counts: [Int: Int]) -> TerminalText {
        let width = 7 * 4
        let title = "\(monthNames[month.month - 1]) \(month.description.prefix(4))" // the year as 4 digits: 0001
        var lines = [String(repeating: " ", count: max(0, (width - title.count) / 2)) + title]
        lines.append(" Mo  Tu  We  Th  Fr  Sa  Su")
        var line = String(repeating: "    ", count: month.firstDay.isoWeekday - 1)
        for day in 1...month.numberOfDays {
            let number = String(day)
            line += String(repeating: " ", count: 3 - number.count) + number + (counts[day] != nil ? "*" : " ")
            if (month.firstDay.isoWeekday - 1 + day) % 7 == 0 {
                lines.append(line.replacingTrailingSpaces())
                line = ""
            }
        }
        if !line.isEmpty { lines.append(line.replacingTrailingSpaces()) }
        let total = counts.values.reduce(0, +)
        lines.append("")
        lines.append(
            total == 0
                ? "no events" : "* \(total) event\(total == 1 ? "" : "s") on \(counts.count) day\(counts.count == 1 ? "" : "s")")
        return TerminalText(lines: lines)
    }
}
