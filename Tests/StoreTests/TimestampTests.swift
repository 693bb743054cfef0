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

    @Test func keepsMillisecondsAndTruncatesFinerFractions() throws {
        let base = try #require(Timestamp.parseMilliseconds("2026-11-20T09:30:00Z"))
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.5Z") == base + 500)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.25Z") == base + 250)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.123Z") == base + 123)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.123999Z") == base + 123)
        #expect(Timestamp.parseMilliseconds("2026-11-20T09:30:00.000Z") == base)
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
        #expect(Timestamp.milliseconds(Date(timeIntervalSince1970: 1.0004)) == 1_000)
        #expect(Timestamp.milliseconds(Date(timeIntervalSince1970: 1.0006)) == 1_001)
        #expect(Timestamp.date(milliseconds: 1_500) == Date(timeIntervalSince1970: 1.5))
    }
}
