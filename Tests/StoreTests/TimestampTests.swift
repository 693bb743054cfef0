import Foundation
import Testing

@testable import Store

@Suite("Timestamp")
struct TimestampTests {
    /// Foundation's own RFC 3339 reading, to compare against.
    private static func foundationDate(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = text.contains(".") ? [.withInternetDateTime, .withFractionalSeconds] : [.withInternetDateTime]
        return formatter.date(from: text)
    }

    @Test(arguments: [
        "2026-11-20T09:30:00Z", "2026-11-20T10:30:00+01:00", "2026-11-20T04:00:00-05:30",
        "2026-11-20T09:30:00.250Z", "2024-02-29T23:59:59.999+00:00", "1969-12-31T23:59:59Z",
        "2000-01-01T00:00:00.500-00:00",
    ])
    func parsesTheSameInstantAsFoundation(text: String) throws {
        let parsed = try #require(Timestamp.parse(text))
        let expected = try #require(Self.foundationDate(text))
        #expect(Timestamp.milliseconds(parsed) == Timestamp.milliseconds(expected))
    }

    @Test func appliesTheOffsetToReachUTC() throws {
        let utc = try #require(Timestamp.parse("2026-11-20T09:30:00Z"))
        #expect(Timestamp.parse("2026-11-20T10:30:00+01:00") == utc)
        #expect(Timestamp.parse("2026-11-20T04:00:00-05:30") == utc)
        #expect(Timestamp.parse("2026-11-21T00:30:00+15:00") == utc)
        #expect(Timestamp.parse("2026-11-20t09:30:00z") == utc)
        #expect(Timestamp.parse("2026-11-20 09:30:00Z") == utc)
    }

    /// Digits past the millisecond round to the nearest one, a half up, as a `Date` does when
    /// stored; they were truncated (`00.9999Z` kept as `.999Z`, where a `Date` 0.9996 s past
    /// the second was kept as the next second).
    @Test func keepsMillisecondsAndRoundsFinerFractions() throws {
        let base = try #require(Timestamp.parseMilliseconds("2026-11-20T09:30:00Z"))
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.5Z") == base + 500)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.25Z") == base + 250)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.123Z") == base + 123)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.1234999Z") == base + 123)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.1235Z") == base + 124)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.123999Z") == base + 124)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.0005Z") == base + 1)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.000Z") == base)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.9999Z") == base + 1_000)
        // The carry runs through seconds, minutes, hours, days and years, offsets included.
        #expect(
            Timestamp.parseMilliseconds("2026-12-31T23:59:59.9995Z") == Timestamp.parseMilliseconds("2027-01-01T00:00:00Z"))
        #expect(
            Timestamp.parseMilliseconds("2027-01-01T00:59:59.99951+01:00")
                == Timestamp.parseMilliseconds("2027-01-01T00:00:00Z"))
        #expect(Timestamp.parseMilliseconds("1969-12-31T23:59:59.9995Z") == 0)
    }

    /// A text and a `Date` of the same instant are kept as the same millisecond.
    @Test func textAndDatesRoundAlike() throws {
        for (seconds, text) in [
            (1_700_000_000.9996, "2023-11-14T22:13:20.9996Z"), (1_700_000_000.0004, "2023-11-14T22:13:20.0004Z"),
            (1_700_000_000.1235, "2023-11-14T22:13:20.1235Z"), (-0.0005, "1969-12-31T23:59:59.9995Z"),
            (-0.0004, "1969-12-31T23:59:59.9996Z"),
        ] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(Timestamp.parseMilliseconds(text) == Timestamp.milliseconds(date), "\(text)")
            #expect(Timestamp.parse(text).map(Timestamp.format) == Timestamp.format(date), "\(text)")
        }
        #expect(Timestamp.format(try #require(Timestamp.parse("2023-11-14T22:13:20.9996Z"))) == "2023-11-14T22:13:21Z")
        // A Date exactly half a millisecond before one (a Double can hold that far back) rounds
        // up, as the text does: it was rounded away from zero, to the earlier millisecond.
        let half = Date(timeIntervalSince1970: -30_000_000_000.0005)
        #expect(half.timeIntervalSince1970 * 1000 == -30_000_000_000_000.5)
        let text = Timestamp.format(milliseconds: -30_000_000_000_001).replacingOccurrences(of: ".999Z", with: ".9995Z")
        #expect(text.hasSuffix(".9995Z"))
        #expect(Timestamp.parseMilliseconds(text) == -30_000_000_000_000)
        #expect(Timestamp.milliseconds(half) == -30_000_000_000_000)
    }

    /// Rounded past the last millisecond of 9999 is out of range, as a `Date` there is.
    @Test func roundingPastTheLastMillisecondIsOutOfRange() {
        #expect(Timestamp.parseMilliseconds("9999-12-31T23:59:59.9994Z") == Timestamp.range.upperBound)
        #expect(Timestamp.parseMilliseconds("9999-12-31T23:59:59.9995Z") == nil)
        #expect(Timestamp.checkedMilliseconds(Date(timeIntervalSince1970: 253_402_300_799.9996)) == nil)
        #expect(
            Timestamp.problem(with: "9999-12-31T23:59:59.9995Z")
                == "is outside years 0001 to 9999 once rounded to milliseconds")
    }

    /// Year 0000 was refused as "not an RFC 3339 timestamp" before its offset was applied; a day
    /// or time that does not exist said the same.
    @Test func saysWhatIsWrongWithAWellFormedTimestamp() throws {
        #expect(Timestamp.parseMilliseconds("0000-12-31T23:00:00-01:00") == Timestamp.range.lowerBound)
        #expect(Timestamp.parseMilliseconds("0000-12-31T23:59:59.9995Z") == Timestamp.range.lowerBound)
        for (text, problem) in [
            ("2026-02-29T00:00:00Z", "names a day that does not exist (2026-02 has 28 days)"),
            ("2026-13-01T00:00:00Z", "names a day that does not exist (there is no month 13)"),
            ("2026-04-00T00:00:00Z", "names a day that does not exist (days start at 01)"),
            ("2026-11-20T24:00:00Z", "names a time of day that does not exist (00:00:00 to 23:59:59)"),
            ("2026-11-20T09:60:00Z", "names a time of day that does not exist (00:00:00 to 23:59:59)"),
            ("2026-11-20T09:30:61Z", "names a time of day that does not exist (00:00:00 to 23:59:59)"),
            ("0000-12-31T23:00:00Z", "is outside years 0001 to 9999"),
            ("0000-12-31T23:00:00+01:00", "is outside years 0001 to 9999 once its offset is applied"),
            ("2026-02-29T00:00:00", "is not an RFC 3339 timestamp such as 2026-11-20T09:30:00Z"),
            ("2026-11-20T09:30:00+24:00", "is not an RFC 3339 timestamp such as 2026-11-20T09:30:00Z"),
        ] {
            #expect(Timestamp.parse(text) == nil, "\(text)")
            #expect(Timestamp.problem(with: text) == problem, "\(text)")
        }
        #expect(Timestamp.parse("2024-02-29T00:00:00Z") != nil)
    }

    @Test(arguments: [
        "2026-11-20", "2026-11-20T09:30:00", "2026-11-20T09:30Z", "2026-11-20T24:00:00Z",
        "2026-11-20T09:60:00Z", "2026-11-20T09:30:60Z", "2026-02-30T09:30:00Z", "2026-13-01T00:00:00Z",
        "2026-11-20T09:30:00.Z", "2026-11-20T09:30:00+0100", "2026-11-20T09:30:00+01",
        "2026-11-20T09:30:00+24:00", "2026-11-20T09:30:00Zjunk", "26-11-20T09:30:00Z",
        "2026-11-20X09:30:00Z", "", "now",
    ])
    func refusesTextThatIsNotAnRFC3339Instant(text: String) {
        #expect(Timestamp.parse(text) == nil)
    }

    @Test func formatsInUTCWithMillisecondsOnlyWhenThereAreAny() throws {
        let whole = try #require(Self.foundationDate("2026-11-20T10:30:00+01:00"))
        #expect(Timestamp.format(whole) == "2026-11-20T09:30:00Z")
        #expect(Timestamp.format(whole.addingTimeInterval(0.25)) == "2026-11-20T09:30:00.250Z")
        #expect(Timestamp.format(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00Z")
        #expect(Timestamp.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    }

    @Test func formatAgreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        for seconds in stride(from: -2_000_000_000, through: 4_000_000_000, by: 7_777_777) {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(Timestamp.format(date) == formatter.string(from: date))
        }
    }

    @Test func roundTripsEveryMillisecondItFormats() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let milliseconds = Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &generator)
            let text = Timestamp.format(milliseconds: milliseconds)
            #expect(Timestamp.parseMilliseconds(text) == milliseconds, "\(text)")
        }
    }

    @Test func roundsDatesToTheNearestMillisecond() {
        #expect(Timestamp.milliseconds(Date(timeIntervalSince1970: -0.0005)) == 0)
        #expect(Timestamp.milliseconds(Date(timeIntervalSince1970: -0.0006)) == -1)
        #expect(Timestamp.milliseconds(Date(timeIntervalSince1970: 1.0004)) == 1_000)
        #expect(Timestamp.milliseconds(Date(timeIntervalSince1970: 1.0006)) == 1_001)
        #expect(Timestamp.date(milliseconds: 1_500) == Date(timeIntervalSince1970: 1.5))
    }
}
