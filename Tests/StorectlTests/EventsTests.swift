import Foundation
import Testing

@Suite("storectl events")
struct EventsTests {
    /// Adds events: (id, title, date, notes).
    func add(_ storectl: Storectl, _ events: [(String, String, String, String?)]) async throws {
        for (id, title, date, notes) in events {
            var arguments = ["events", "add", "--id", id, "--title", title, "--date", date]
            if let notes { arguments += ["--notes", notes] }
            let result = expectSuccess(try await storectl.run(arguments))
            #expect(result.output == "added event \(id) on \(date)")
        }
    }

    static let june: [(String, String, String, String?)] = [
        ("e-may", "End of May", "2026-05-31", nil),
        ("e-7", "WWDC keynote", "2026-06-08", "Hall A"),
        ("e-8", "State of the Union", "2026-06-08", nil),
        ("e-9", "Labs", "2026-06-09", "Online"),
        ("e-30", "Month end", "2026-06-30", nil),
        ("e-jul", "July", "2026-07-01", nil),
    ]

    func ids(_ result: StorectlResult) throws -> [String] {
        try JSON.array(expectSuccess(result).stdout).compactMap { $0["id"] as? String }
    }

    @Test("add, show --json, list with --date and --month filters, delete")
    func lifecycle() async throws {
        let storectl = try Storectl()
        try await add(storectl, Self.june)

        let shown = try JSON.object(expectSuccess(try await storectl("events", "show", "e-7", "--json")).stdout)
        #expect(Set(shown.keys) == ["id", "title", "date", "notes"])
        #expect(shown["id"] as? String == "e-7")
        #expect(shown["title"] as? String == "WWDC keynote")
        #expect(shown["date"] as? String == "2026-06-08")
        #expect(shown["notes"] as? String == "Hall A")
        let noNotes = try JSON.object(try await storectl("events", "show", "e-8", "--json").stdout)
        #expect(Set(noNotes.keys) == ["id", "title", "date"], "notes is left out when absent")

        // All, by date (then id).
        #expect(try ids(try await storectl("events", "list", "--json")) == ["e-may", "e-7", "e-8", "e-9", "e-30", "e-jul"])
        #expect(try ids(try await storectl("events", "list", "--json", "--date", "2026-06-08")) == ["e-7", "e-8"])
        #expect(try ids(try await storectl("events", "list", "--json", "--date", "2026-06-10")) == [])
        #expect(try ids(try await storectl("events", "list", "--json", "--month", "2026-06")) == ["e-7", "e-8", "e-9", "e-30"])
        #expect(try ids(try await storectl("events", "list", "--json", "--month", "2026-07")) == ["e-jul"])
        #expect(try ids(try await storectl("events", "list", "--json", "--month", "2025-06")) == [])

        let table = expectSuccess(try await storectl("events", "list", "--month", "2026-06")).lines
        #expect(table.count == 6, "\(table)")
        #expect(table[2].hasPrefix("2026-06-08") && table[2].contains("e-7") && table[2].hasSuffix("Hall A"))

        let text = expectSuccess(try await storectl("events", "show", "e-9")).stdout
        #expect(text.contains("Labs") && text.contains("2026-06-09") && text.contains("Online"))

        #expect(expectSuccess(try await storectl("events", "delete", "e-7")).output == "deleted event e-7")
        #expect(try ids(try await storectl("events", "list", "--json", "--date", "2026-06-08")) == ["e-8"])
        expectFailure(try await storectl("events", "show", "e-7"), mentioning: ["'e-7'"])
        expectFailure(try await storectl("events", "delete", "e-7"), mentioning: ["'e-7'"])
        expectFailure(
            try await storectl("events", "add", "--id", "e-8", "--title", "T", "--date", "2026-06-01"),
            mentioning: ["'e-8'", "already exists"])
    }

    @Test(
        "dates that do not exist are refused, naming --date",
        arguments: ["2026-02-30", "2026-02-29", "2026-13-01", "2026-6-1", "tomorrow"])
    func invalidDate(date: String) async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate")) // the store exists: a read of a missing one is refused
        let result = try await storectl("events", "add", "--id", "bad", "--title", "T", "--date", date)
        expectFailure(result, status: exitUsage, mentioning: ["--date", "'\(date)'"])
        expectFailure(try await storectl("events", "list", "--date", date), status: exitUsage, mentioning: ["--date"])
        #expect(try ids(try await storectl("events", "list", "--json")) == [])
    }

    @Test("a leap day exists in 2028")
    func leapDay() async throws {
        let storectl = try Storectl()
        try await add(storectl, [("leap", "Leap", "2028-02-29", nil)])
        #expect(try ids(try await storectl("events", "list", "--json", "--date", "2028-02-29")) == ["leap"])
    }

    @Test("invalid months and conflicting filters are usage errors")
    func invalidFilters() async throws {
        let storectl = try Storectl()
        expectFailure(try await storectl("events", "list", "--month", "2026-13"), status: exitUsage, mentioning: ["--month"])
        expectFailure(try await storectl("events", "dates", "--month", "June"), status: exitUsage, mentioning: ["--month"])
        expectFailure(try await storectl("events", "calendar", "2026-00"), status: exitUsage, mentioning: ["2026-00"])
        expectFailure(try await storectl("events", "list", "--date", "2026-06-08", "--month", "2026-06"), status: exitUsage)
    }

    @Test("dates --month --json gives [{date, count}] for the days of that month with events")
    func datesJSON() async throws {
        let storectl = try Storectl()
        try await add(storectl, Self.june)
        let dates = try JSON.array(expectSuccess(try await storectl("events", "dates", "--month", "2026-06", "--json")).stdout)
        for entry in dates { #expect(Set(entry.keys) == ["date", "count"]) }
        #expect(dates.map { $0["date"] as? String } == ["2026-06-08", "2026-06-09", "2026-06-30"])
        #expect(dates.map { JSON.integer($0["count"]) } == [2, 1, 1])

        let empty = try JSON.parse(expectSuccess(try await storectl("events", "dates", "--month", "2026-08", "--json")).stdout)
        #expect((empty as? [Any])?.isEmpty == true)

        let table = expectSuccess(try await storectl("events", "dates", "--month", "2026-06")).lines
        #expect(table.count == 5)
        #expect(table[2].hasPrefix("2026-06-08") && table[2].hasSuffix("2"))
    }

    /// One day cell of the calendar grid.
    struct Cell: Equatable {
        var day: Int
        var column: Int
        var marked: Bool
    }

    /// Parses `events calendar`: title, weekday header, then rows of four-column cells.
    func parseCalendar(_ text: String) throws -> (title: String, header: String, cells: [Cell], footer: String) {
        let lines = text.components(separatedBy: "\n")
        try #require(lines.count > 4, "\(text)")
        var cells: [Cell] = []
        var index = 2
        while index < lines.count, !lines[index].isEmpty {
            let characters = Array(lines[index])
            try #require(characters.count <= 28, "a row is at most seven cells of four columns: '\(lines[index])'")
            for column in 0..<7 where column * 4 < characters.count {
                let cell = characters[(column * 4)..<min(column * 4 + 4, characters.count)]
                let number = String(cell.prefix(3)).trimmingCharacters(in: .whitespaces)
                let marker = cell.count == 4 ? cell.last! : " "
                if number.isEmpty {
                    #expect(marker == " ", "a blank cell has no marker: '\(lines[index])'")
                    continue
                }
                let day = try #require(Int(number), "'\(lines[index])'")
                try #require(marker == "*" || marker == " ", "'\(lines[index])'")
                cells.append(Cell(day: day, column: column, marked: marker == "*"))
            }
            index += 1
        }
        let footer = lines[(index + 1)...].joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        return (lines[0].trimmingCharacters(in: .whitespaces), lines[1], cells, footer)
    }

    /// The ISO weekday column (Monday 0 ... Sunday 6) of a day, by Foundation's calendar.
    func column(year: Int, month: Int, day: Int) throws -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let date = try #require(calendar.date(from: DateComponents(year: year, month: month, day: day)))
        return (calendar.component(.weekday, from: date) + 5) % 7 // weekday: Sunday 1 ... Saturday 7
    }

    @Test("calendar marks exactly the days with events, in the right weekday columns")
    func calendar() async throws {
        let storectl = try Storectl()
        try await add(storectl, Self.june)
        let result = expectSuccess(try await storectl("events", "calendar", "2026-06"))
        let calendar = try parseCalendar(result.output)
        #expect(calendar.title == "June 2026")
        #expect(calendar.header.split(separator: " ") == ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"])
        #expect(calendar.cells.map(\.day) == Array(1...30), "every day once, in order")
        for cell in calendar.cells {
            #expect(cell.column == (try column(year: 2026, month: 6, day: cell.day)), "day \(cell.day)")
        }
        #expect(Set(calendar.cells.filter(\.marked).map(\.day)) == [8, 9, 30])
        #expect(calendar.footer == "* 4 events on 3 days")
    }

    @Test("calendar of a month without events: nothing marked, 'no events'", arguments: ["2026-02", "2024-02", "2026-08"])
    func emptyCalendar(month: String) async throws {
        let storectl = try Storectl()
        try await add(storectl, Self.june)
        let calendar = try parseCalendar(expectSuccess(try await storectl("events", "calendar", month)).output)
        let parts = month.split(separator: "-").compactMap { Int($0) }
        let days = month == "2024-02" ? 29 : month == "2026-02" ? 28 : 31
        #expect(calendar.cells.map(\.day) == Array(1...days))
        for cell in calendar.cells {
            #expect(cell.column == (try column(year: parts[0], month: parts[1], day: cell.day)), "\(month)-\(cell.day)")
        }
        #expect(calendar.cells.allSatisfy { !$0.marked })
        #expect(calendar.footer == "no events")
    }
}
