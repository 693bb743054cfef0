/// A day of the calendar, without time or time zone: `2026-06-08`.
public struct CalendarDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The year, 1 to 9999 (proleptic Gregorian calendar).
    public let year: Int
    /// The month, 1 (January) to 12.
    public let month: Int
    /// The day of the month, 1 to the month's last day (28 to 31).
    public let day: Int

    /// Nil unless the date exists in years 1 to 9999 of the proleptic Gregorian calendar
    /// (2026-02-30 does not; 2024-02-29 does).
    public init?(year: Int, month: Int, day: Int) {
        guard CivilCalendar.isValid(year: year, month: month, day: day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses exactly `YYYY-MM-DD`; nil for anything else or a date that does not exist.
    public init?(_ text: String) {
        // Read in place: every event of a sync is parsed, and its date again by the change hook.
        var text = text
        let parts = text.withUTF8 { bytes -> (Int, Int, Int)? in
            guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return nil }
            func number(_ range: Range<Int>) -> Int? {
                var value = 0
                for index in range {
                    let digit = bytes[index] &- 48
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int(digit)
                }
                return value
            }
            guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else { return nil }
            return (year, month, day)
        }
        guard let (year, month, day) = parts else { return nil }
        self.init(year: year, month: month, day: day)
    }

    /// Why `init?(_:)` refused `text`, in words that follow it quoted: "is not a calendar date
    /// (YYYY-MM-DD)", or, for one of that shape, why it is no day ("is not a calendar date: that
    /// day does not exist (2025-02 has 28 days)").
    package static func problem(with text: String) -> String {
        let bytes = Array(text.utf8)
        let digitsAt = [0, 1, 2, 3, 5, 6, 8, 9]
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            digitsAt.allSatisfy({ bytes[$0] &- 48 < 10 })
        else { return "is not a calendar date (YYYY-MM-DD)" }
        func number(_ range: Range<Int>) -> Int { range.reduce(0) { $0 * 10 + Int(bytes[$1] - 48) } }
        let (year, month, day) = (number(0..<4), number(5..<7), number(8..<10))
        if let reason = CivilCalendar.dayProblem(year: year, month: month, day: day) {
            return "is not a calendar date: that day does not exist (\(reason))"
        }
        if year == 0 { return "is not a calendar date: years run from 0001 to 9999" }
        return "is not a calendar date (YYYY-MM-DD)"
    }

    /// Days since 1970-01-01.
    var daysSinceEpoch: Int { CivilCalendar.days(year: year, month: month, day: day) }

    init(daysSinceEpoch days: Int) {
        let (year, month, day) = CivilCalendar.date(days: days)
        self.year = year
        self.month = month
        self.day = day
    }

    /// The month it falls in.
    public var yearMonth: YearMonth { YearMonth(year: year, month: month)! }

    /// The date `count` days later (earlier when negative); nil outside years 1 to 9999, as
    /// `init?(year:month:day:)` is (9999-12-31 plus a day was year 10000, and its `description`
    /// and `yearMonth` trapped).
    public func adding(days count: Int) -> CalendarDate? {
        let (days, overflow) = daysSinceEpoch.addingReportingOverflow(count)
        guard !overflow, Self.range.contains(days) else { return nil }
        return CalendarDate(daysSinceEpoch: days)
    }

    /// The days since 1970-01-01 of 0001-01-01 through 9999-12-31.
    static let range = CivilCalendar.days(year: 1, month: 1, day: 1)...CivilCalendar.days(year: 9999, month: 12, day: 31)

    /// 1 for Monday ... 7 for Sunday (ISO 8601).
    public var isoWeekday: Int { CivilCalendar.weekday(days: daysSinceEpoch) + 1 }

    public var description: String {
        let y = String(year), m = String(month), d = String(day)
        return String(repeating: "0", count: 4 - y.count) + y + "-" + (m.count == 1 ? "0" : "") + m + "-"
            + (d.count == 1 ? "0" : "") + d
    }

    public static func < (lhs: CalendarDate, rhs: CalendarDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }
}

extension CalendarDate: Codable {
    /// Encoded as the string `YYYY-MM-DD`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = CalendarDate(text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(text) is not a calendar date (YYYY-MM-DD)")
        }
        self = date
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
