import Foundation
import Store
import Testing

/// What storectl says about a `--placed-at` or `--date` it refuses: why, not only "is invalid"
/// or "not an RFC 3339 timestamp".
@Suite(.timeLimit(.minutes(10)))
struct DateArgumentTests {
    /// Year 0000 was refused before the offset was applied, though the instant is in range.
    @Test func aYearZeroTimeWhoseOffsetBringsItIntoYearOneIsTaken() async throws {
        let cli = try Storectl()
        expectSuccess(
            try await cli("orders", "add", "--id", "t", "--placed-at", "0000-12-31T23:00:00-01:00", "--item", "A:1:1"))
        let shown = expectSuccess(try await cli("orders", "show", "t"))
        #expect(shown.stdout.contains("placed at 0001-01-01T00:00:00Z"), "\(shown)")
        expectFailure(
            try await cli("orders", "add", "--id", "u", "--placed-at", "0000-12-31T23:00:00Z", "--item", "A:1:1"),
            status: exitUsage, mentioning: ["--placed-at", "is outside years 0001 to 9999"])
    }

    @Test func aTimeOnADayOrAtAnHourThatDoesNotExistSaysSo() async throws {
        let cli = try Storectl()
        expectFailure(
            try await cli("orders", "add", "--id", "t", "--placed-at", "2026-02-29T00:00:00Z", "--item", "A:1:1"),
            status: exitUsage,
            mentioning: ["--placed-at", "'2026-02-29T00:00:00Z'", "names a day that does not exist (2026-02 has 28 days)"])
        expectFailure(
            try await cli("orders", "add", "--id", "t", "--placed-at", "2026-11-20T24:00:00Z", "--item", "A:1:1"),
            status: exitUsage, mentioning: ["--placed-at", "names a time of day that does not exist"])
        expectSuccess(try await cli("orders", "add", "--id", "t", "--item", "A:1:1"))
        expectFailure(
            try await cli("orders", "update", "t", "--placed-at", "2025-02-29T12:00:00+02:00"),
            status: exitUsage, mentioning: ["--placed-at", "2025-02 has 28 days"])
    }

    /// `events add --date 2025-02-29` said only "is invalid".
    @Test func aDayThatDoesNotExistSaysWhy() async throws {
        let cli = try Storectl()
        for arguments in [
            ["events", "add", "--id", "e", "--title", "T", "--date", "2025-02-29"],
            ["events", "list", "--date", "2025-02-29"],
            ["events", "update", "e", "--date", "2025-02-29"],
        ] {
            expectFailure(
                try await cli.run(arguments), status: exitUsage,
                mentioning: ["--date", "'2025-02-29'", "that day does not exist (2025-02 has 28 days)"])
        }
        expectFailure(
            try await cli("events", "add", "--id", "e", "--title", "T", "--date", "2025-13-01"), status: exitUsage,
            mentioning: ["--date", "there is no month 13"])
        expectFailure(
            try await cli("events", "add", "--id", "e", "--title", "T", "--date", "0000-01-01"), status: exitUsage,
            mentioning: ["--date", "years run from 0001 to 9999"])
        expectFailure(
            try await cli("events", "add", "--id", "e", "--title", "T", "--date", "2025-2-1"), status: exitUsage,
            mentioning: ["--date", "is not a calendar date (YYYY-MM-DD)"])
        #expect(!FileManager.default.fileExists(atPath: cli.db))
        expectSuccess(try await cli("events", "add", "--id", "e", "--title", "T", "--date", "2024-02-29"))
    }
}
