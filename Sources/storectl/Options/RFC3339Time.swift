import ArgumentParser
import Foundation
import Store

/// An instant written in RFC 3339, such as `2026-11-20T09:30:00Z`.
struct RFC3339Time: ExpressibleByArgument, Sendable {
    let date: Date

    init?(argument: String) {
        guard let date = Timestamp.parse(argument) else { return nil }
        self.date = date
    }

    /// For `@Option(transform:)`: a refused value's error says why ("names a leap second ..."),
    /// where `init?(argument:)` alone gave only "is invalid".
    @Sendable static func parse(_ argument: String) throws -> RFC3339Time {
        guard let time = RFC3339Time(argument: argument) else {
            throw ValidationError(Timestamp.problem(with: argument))
        }
        return time
    }
}
