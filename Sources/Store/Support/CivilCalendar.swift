/// Proleptic Gregorian calendar arithmetic on plain integers (days since 1970-01-01), after
/// Howard Hinnant's `days_from_civil`; no Calendar or time zone is involved, so results are
/// the same on every machine.
enum CivilCalendar {
    static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func isValid(year: Int, month: Int, day: Int) -> Bool {
        (1...9999).contains(year) && (1...12).contains(month) && day >= 1 && day <= daysInMonth(year: year, month: month)
    }

    /// Why `year`-`month`-`day` is not a day of the calendar, for a message ("2026-02 has 28
    /// days", "there is no month 13"), or nil if it is one; any year from 0000 to 9999 (the
    /// proleptic calendar's year 0 is a leap year), so a caller decides about the range itself.
    static func dayProblem(year: Int, month: Int, day: Int) -> String? {
        guard (1...12).contains(month) else { return "there is no month \(month < 10 ? "0" : "")\(month)" }
        guard day >= 1 else { return "days start at 01" }
        let last = daysInMonth(year: year, month: month)
        guard day <= last else {
            let y = String(year)
            return "\(String(repeating: "0", count: max(0, 4 - y.count)))\(y)-\(month < 10 ? "0" : "")\(month) has \(last) days"
        }
        return nil
    }

    /// Days since 1970-01-01 of a valid date.
    static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146097 + dayOfEra - 719468
    }

    /// The date `days` after 1970-01-01.
    static func date(days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let dayOfEra = z - era * 146097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// 0 for Monday ... 6 for Sunday (ISO 8601 order).
    static func weekday(days: Int) -> Int {
        // 1970-01-01 was a Thursday (3).
        ((days % 7) + 7 + 3) % 7
    }
}
