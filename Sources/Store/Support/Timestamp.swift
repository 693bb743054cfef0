import Foundation

/// Strict RFC 3339 timestamps, with millisecond precision (what the store keeps).
package enum Timestamp {
    /// The times a timestamp may name: years 0001 to 9999 (what RFC 3339 can write), UTC, in
    /// milliseconds since 1970.
    static let range: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// Milliseconds since 1970 of `date`, rounded to the nearest millisecond (halves up, to the
    /// later millisecond, as `parse` rounds a text's digits), and clamped to `range` (a date
    /// beyond it cannot be written anyway: see `checkedMilliseconds`).
    static func milliseconds(_ date: Date) -> Int64 {
        let value = roundedHalfUp(date.timeIntervalSince1970 * 1000)
        guard value.isFinite else { return value < 0 ? range.lowerBound : range.upperBound }
        return Int64(min(max(value, Double(range.lowerBound)), Double(range.upperBound)))
    }

    /// Milliseconds since 1970 of `date`, rounded as `milliseconds(_:)` rounds, or nil if that
    /// lies outside years 0001 to 9999.
    static func checkedMilliseconds(_ date: Date) -> Int64? {
        let value = roundedHalfUp(date.timeIntervalSince1970 * 1000)
        guard value.isFinite, value >= Double(range.lowerBound), value <= Double(range.upperBound) else { return nil }
        return Int64(value)
    }

    /// The nearest integer, a half up (-0.5 is 0: `rounded()` took halves away from zero, so a
    /// time before 1970 rounded the other way from its text).
    private static func roundedHalfUp(_ value: Double) -> Double {
        let below = value.rounded(.down)
        return value - below >= 0.5 ? below + 1 : below
    }

    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// `2026-11-20T09:30:00Z`, or `2026-11-20T09:30:00.250Z` when there are milliseconds. UTC.
    package static func format(_ date: Date) -> String { format(milliseconds: milliseconds(date)) }

    static func format(milliseconds total: Int64) -> String {
        let (seconds, millis) = (floorDivide(total, 1000), total - floorDivide(total, 1000) * 1000)
        let days = Int(floorDivide(seconds, 86_400))
        let secondOfDay = Int(seconds - Int64(days) * 86_400)
        let (year, month, day) = CivilCalendar.date(days: days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        text += "T" + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if millis != 0 { text += "." + pad(Int(millis), 3) }
        return text + "Z"
    }

    /// Parses an RFC 3339 `date-time` ("2026-11-20T09:30:00Z", "2026-11-20T10:30:00.5+01:00");
    /// nil if it is not one or names a time that does not exist. A fraction finer than
    /// milliseconds is rounded to the nearest millisecond, a half up (`.0005` is `.001`,
    /// `59.9995` the next second), as a `Date` is rounded when stored; an instant rounded past
    /// 9999-12-31T23:59:59.999Z is out of range.
    package static func parse(_ text: String) -> Date? { parseMilliseconds(text).map(date(milliseconds:)) }

    /// Why `parse` refused `text`, in words that follow it quoted: "is not an RFC 3339 timestamp
    /// such as ...", or, for a well-formed one, what it names that does not exist or that a
    /// `Date` cannot name.
    package static func problem(with text: String) -> String {
        switch parseChecked(text) {
        case .leapSecond: "names a leap second (second 60), which the store cannot keep: write the second before or after"
        case .outOfRange(let how): "is outside years 0001 to 9999\(how)"
        case .noSuchDay(let reason): "names a day that does not exist (\(reason))"
        case .noSuchTime: "names a time of day that does not exist (00:00:00 to 23:59:59)"
        case .milliseconds, .invalid: "is not an RFC 3339 timestamp such as 2026-11-20T09:30:00Z"
        }
    }

    static func parseMilliseconds(_ text: String) -> Int64? {
        if case .milliseconds(let total) = parseChecked(text) { return total }
        return nil
    }

    private enum Parsed {
        case milliseconds(Int64)
        /// Not a `date-time`.
        case invalid
        /// A well-formed `date-time` on a day that does not exist (2026-02-29, month 13), and why.
        case noSuchDay(String)
        /// A well-formed `date-time` at a time of day that does not exist (24:00:00, 09:60:00).
        case noSuchTime
        /// A well-formed `date-time` at second 60, which RFC 3339 allows for leap seconds.
        case leapSecond
        /// A well-formed `date-time` whose instant (in UTC, rounded to milliseconds) is outside
        /// `range`, with what moved it there: " once its offset is applied", " once rounded to
        /// milliseconds", or nothing (year 0000 in UTC).
        case outOfRange(String)
    }

    private static func parseChecked(_ text: String) -> Parsed {
        let b = Array(text.utf8)
        var i = 0
        func number(_ width: Int) -> Int? {
            guard i + width <= b.count else { return nil }
            var value = 0
            for _ in 0..<width {
                guard (0x30...0x39).contains(b[i]) else { return nil }
                value = value * 10 + Int(b[i] - 0x30)
                i += 1
            }
            return value
        }
        func expect(_ characters: UInt8...) -> Bool {
            guard i < b.count, characters.contains(b[i]) else { return false }
            i += 1
            return true
        }
        // The shape first; what the numbers name is checked once the whole text is read.
        guard let year = number(4), expect(0x2D), let month = number(2), expect(0x2D), let day = number(2),
            expect(0x54, 0x74, 0x20), let hour = number(2), expect(0x3A), let minute = number(2),
            expect(0x3A), let second = number(2)
        else { return .invalid }
        // Milliseconds, rounded half up by the fourth digit (1000 carries into the second).
        var millis = 0
        var roundedUp = false
        if i < b.count, b[i] == 0x2E {
            i += 1
            var digits = 0
            while i < b.count, (0x30...0x39).contains(b[i]) {
                if digits < 3 { millis = millis * 10 + Int(b[i] - 0x30) }
                if digits == 3, b[i] >= 0x35 {
                    millis += 1
                    roundedUp = true
                }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return .invalid }
            for _ in min(digits, 3)..<3 { millis *= 10 }
        }
        var offsetMinutes = 0
        if expect(0x5A, 0x7A) {
            offsetMinutes = 0
        } else if i < b.count, b[i] == 0x2B || b[i] == 0x2D {
            let sign = b[i] == 0x2D ? -1 : 1
            i += 1
            guard let offsetHours = number(2), expect(0x3A), let offsetMins = number(2), offsetHours < 24, offsetMins < 60
            else { return .invalid }
            offsetMinutes = sign * (offsetHours * 60 + offsetMins)
        } else {
            return .invalid
        }
        guard i == b.count else { return .invalid }
        // Year 0000 is left to the range check: an offset may move it into year 0001
        // (0000-12-31T23:00:00-01:00 is 0001-01-01T00:00:00Z).
        if let reason = CivilCalendar.dayProblem(year: year, month: month, day: day) { return .noSuchDay(reason) }
        guard hour < 24, minute < 60, second <= 60 else { return .noSuchTime }
        if second == 60 { return .leapSecond }
        let days = CivilCalendar.days(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        // An offset may move the instant out of years 0001-9999 ("0001-01-01T00:00:00+01:00"),
        // and rounding may carry it past the last millisecond: refused, since it could not be
        // written back.
        let total = seconds * 1000 + Int64(millis)
        if range.contains(total) { return .milliseconds(total) }
        if offsetMinutes != 0 { return .outOfRange(" once its offset is applied") }
        return .outOfRange(roundedUp && range.contains(total - 1) ? " once rounded to milliseconds" : "")
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
