/// A month of a year: `2026-06`.
public struct YearMonth: Sendable, Hashable, Comparable, CustomStringConvertible, Codable {
    /// The year, 1 to 9999.
    public let year: Int
    /// The month, 1 (January) to 12.
    public let month: Int

    /// Nil unless `year` is 1 to 9999 and `month` 1 to 12.
    public init?(year: Int, month: Int) {
        guard (1...9999).contains(year), (1...12).contains(month) else { return nil }
        self.year = year
        self.month = month
    }

    /// Parses exactly `YYYY-MM`.
    public init?(_ text: String) {
        guard text.utf8.count == 7, let first = CalendarDate(text + "-01") else { return nil }
        self.init(year: first.year, month: first.month)
    }

    /// The month's first day: `2026-06-01`.
    public var firstDay: CalendarDate { CalendarDate(year: year, month: month, day: 1)! }

    /// How many days the month has, 28 to 31 (February of a leap year has 29).
    public var numberOfDays: Int { CivilCalendar.daysInMonth(year: year, month: month) }

    /// The month's last day: `2026-06-30`, `2024-02-29`.
    public var lastDay: CalendarDate { CalendarDate(year: year, month: month, day: numberOfDays)! }

    /// Every day of the month, in order.
    public var days: [CalendarDate] { (1...numberOfDays).map { CalendarDate(year: year, month: month, day: $0)! } }

    public var description: String { String(firstDay.description.prefix(7)) }

    public static func < (lhs: YearMonth, rhs: YearMonth) -> Bool { (lhs.year, lhs.month) < (rhs.year, rhs.month) }

    private enum CodingKeys: String, CodingKey { case year, month }

    /// Decoded from `{"year": 2026, "month": 6}`, refusing a month that does not exist (the
    /// synthesized decoder would accept month 13, and `firstDay` would then trap).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let year = try container.decode(Int.self, forKey: .year)
        let month = try container.decode(Int.self, forKey: .month)
        guard let value = YearMonth(year: year, month: month) else {
            throw DecodingError.dataCorruptedError(
                forKey: .month, in: container,
                debugDescription: "year \(year) month \(month) is not a month (years 1...9999, months 1...12)")
        }
        self = value
    }
}
