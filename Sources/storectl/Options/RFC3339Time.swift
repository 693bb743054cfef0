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
}
