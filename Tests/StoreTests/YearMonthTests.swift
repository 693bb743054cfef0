import Foundation
import Testing

@testable import Store

@Suite("YearMonth")
struct YearMonthTests {
    @Test func parsesExactlyYYYYMM() {
        #expect(YearMonth("2026-06") == YearMonth(year: 2026, month: 6))
        #expect(YearMonth("2026-06")?.description == "2026-06")
        for text in ["2026-6", "2026-13", "2026-00", "2026-06-01", "202606", "", "2026-6-"] {
            #expect(YearMonth(text) == nil, "\(text)")
        }
        #expect(YearMonth(year: 2026, month: 13) == nil)
        #expect(YearMonth(year: 0, month: 1) == nil)
    }

    @Test func knowsHowManyDaysEachMonthHas() {
        #expect(Fixtures.month("2024-02").numberOfDays == 29)
        #expect(Fixtures.month("2023-02").numberOfDays == 28)
        #expect(Fixtures.month("1900-02").numberOfDays == 28)
        #expect(Fixtures.month("2000-02").numberOfDays == 29)
        #expect(Fixtures.month("2026-04").numberOfDays == 30)
        #expect(Fixtures.month("2026-12").numberOfDays == 31)
    }

    @Test func listsEveryDayFromFirstToLast() {
        let june = Fixtures.month("2026-06")
        #expect(june.firstDay == Fixtures.date("2026-06-01"))
        #expect(june.lastDay == Fixtures.date("2026-06-30"))
        #expect(june.days.count == june.numberOfDays)
        #expect(june.days.allSatisfy { $0.yearMonth == june })
        #expect(zip(june.days, june.days.dropFirst()).allSatisfy { $0.adding(days: 1)! == $1 })
    }

    @Test func ordersChronologically() {
        let months = ["2026-06", "2025-12", "2026-01", "2026-11"].map(Fixtures.month)
        #expect(months.sorted().map(\.description) == ["2025-12", "2026-01", "2026-06", "2026-11"])
    }

    @Test func survivesAJSONRoundTrip() throws {
        let months = [Fixtures.month("2026-06"), Fixtures.month("0042-12")]
        let data = try JSONEncoder().encode(months)
        #expect(try JSONDecoder().decode([YearMonth].self, from: data) == months)
    }
}

extension YearMonthTests {
    @Test(arguments: [#"{"year":2026,"month":13}"#, #"{"year":2026,"month":0}"#, #"{"year":10000,"month":1}"#])
    func refusesToDecodeAMonthThatDoesNotExist(json: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(YearMonth.self, from: Data(json.utf8))
        }
    }
}
