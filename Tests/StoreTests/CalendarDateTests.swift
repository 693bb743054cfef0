import Foundation
import Testing

@testable import Store

@Suite("CalendarDate")
struct CalendarDateTests {
    @Test(arguments: ["2026-06-08", "2024-02-29", "2000-02-29", "2026-01-01", "2026-12-31", "0001-01-01", "9999-12-31"])
    func acceptsDatesThatExist(text: String) throws {
        let date = try #require(CalendarDate(text))
        #expect(date.description == text)
    }

    @Test(arguments: [
        "2026-02-30", "2023-02-29", "1900-02-29", "2026-04-31", "2026-13-01", "2026-00-10",
        "2026-01-00", "2026-1-01", "2026-01-1", "26-01-01", "2026/01/01", "2026-01-01T00:00:00Z",
        "", "0000-01-01", "+026-01-01", "2026-01-01 ",
    ])
    func refusesTextThatIsNotARealDate(text: String) {
        #expect(CalendarDate(text) == nil)
    }

    @Test func refusesComponentsThatDoNotExist() {
        #expect(CalendarDate(year: 2026, month: 2, day: 30) == nil)
        #expect(CalendarDate(year: 2023, month: 2, day: 29) == nil)
        #expect(CalendarDate(year: 2024, month: 2, day: 29) != nil)
        #expect(CalendarDate(year: 2026, month: 0, day: 1) == nil)
    }

    @Test func ordersChronologically() {
        let texts = ["2026-06-08", "2025-12-31", "2026-01-10", "2026-01-09", "2026-10-01"]
        let sorted = texts.compactMap(CalendarDate.init).sorted().map(\.description)
        #expect(sorted == texts.sorted()) // YYYY-MM-DD sorts as text in calendar order
        #expect(Fixtures.date("2026-02-28") < Fixtures.date("2026-03-01"))
    }

    @Test func knowsThatJune8th2026IsAMonday() {
        #expect(Fixtures.date("2026-06-08").isoWeekday == 1)
        #expect(Fixtures.date("2026-06-14").isoWeekday == 7)
        #expect(Fixtures.date("1970-01-01").isoWeekday == 4) // a Thursday
        #expect(Fixtures.date("1969-12-31").isoWeekday == 3)
    }

    @Test func agreesWithFoundationsGregorianCalendar() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "UTC"))
        var day = try #require(calendar.date(from: DateComponents(year: 1890, month: 1, day: 1)))
        let end = try #require(calendar.date(from: DateComponents(year: 2110, month: 1, day: 1)))
        while day < end {
            let parts = calendar.dateComponents([.year, .month, .day, .weekday], from: day)
            let date = try #require(CalendarDate(year: parts.year!, month: parts.month!, day: parts.day!))
            // Foundation counts weekdays from Sunday = 1; ISO 8601 from Monday = 1.
            #expect(date.isoWeekday == (parts.weekday! + 5) % 7 + 1)
            #expect(date.daysSinceEpoch == Int((day.timeIntervalSince1970 / 86_400).rounded()))
            #expect(CalendarDate(daysSinceEpoch: date.daysSinceEpoch) == date)
            day = try #require(calendar.date(byAdding: .day, value: 13, to: day))
        }
    }

    @Test func addsDaysAcrossMonthAndYearEnds() {
        #expect(Fixtures.date("2024-02-28").adding(days: 1)! == Fixtures.date("2024-02-29"))
        #expect(Fixtures.date("2023-02-28").adding(days: 1)! == Fixtures.date("2023-03-01"))
        #expect(Fixtures.date("2026-12-31").adding(days: 1)! == Fixtures.date("2027-01-01"))
        #expect(Fixtures.date("2026-01-01").adding(days: -1)! == Fixtures.date("2025-12-31"))
        #expect(Fixtures.date("2026-06-08").adding(days: 7)!.isoWeekday == 1)
        // Out of years 1 to 9999: nil (year 10000 trapped in description and yearMonth).
        #expect(Fixtures.date("9999-12-31").adding(days: 1) == nil)
        #expect(Fixtures.date("0001-01-01").adding(days: -1) == nil)
        #expect(Fixtures.date("2026-06-08").adding(days: .max) == nil)
        #expect(Fixtures.date("0001-01-01").adding(days: 3_652_058) == Fixtures.date("9999-12-31"))
    }

    @Test func knowsItsMonth() {
        #expect(Fixtures.date("2026-06-08").yearMonth == YearMonth(year: 2026, month: 6))
    }

    @Test func codesAsTheStringYYYYMMDD() throws {
        let dates = [Fixtures.date("2026-06-08"), Fixtures.date("0999-01-02")]
        let data = try JSONEncoder().encode(dates)
        #expect(String(decoding: data, as: UTF8.self) == #"["2026-06-08","0999-01-02"]"#)
        #expect(try JSONDecoder().decode([CalendarDate].self, from: data) == dates)
    }

    @Test(arguments: [#"["2026-02-30"]"#, #"["2026-6-8"]"#, "[20260608]"])
    func refusesToDecodeADateThatDoesNotExist(json: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode([CalendarDate].self, from: Data(json.utf8))
        }
    }
}
