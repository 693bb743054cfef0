import ArgumentParser
import Foundation
import Store

// The library's values, read straight from the command line: ArgumentParser parses each option
// once, into its type, and a malformed value is a usage error (64) that quotes it and names the
// option and the expected form (the value name, e.g. `--date <YYYY-MM-DD>`).

extension CalendarDate: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }

    /// For `@Option(transform:)`: a refused day's error says why ("that day does not exist
    /// (2025-02 has 28 days)"), where `init?(argument:)` alone gave only "is invalid".
    @Sendable static func parse(_ argument: String) throws -> CalendarDate {
        guard let date = CalendarDate(argument) else { throw ValidationError(CalendarDate.problem(with: argument)) }
        return date
    }
}

extension YearMonth: ExpressibleByArgument {
    public init?(argument: String) { self.init(argument) }
}

extension SyncPolicy: ExpressibleByArgument {}

extension RecordKind: ExpressibleByArgument {
    /// A built-in kind (`framework`, `order`, `event`, `image`) or an app's (`reminder`): any name
    /// the store's change log can hold, which is the rule for `StoreRecord.kind` (a lowercase
    /// ASCII letter, then lowercase letters, digits and `_`). storectl does not know an app's
    /// types, so a well-formed name is taken as it is; `Reminder` or `order-item` is refused.
    public init?(argument: String) {
        guard Self.isPlainName(argument) else { return nil }
        self.init(rawValue: argument)
    }
}

extension Store.Durability: ExpressibleByArgument {}

extension FeedSource: ExpressibleByArgument {
    /// A path, a `file:` or http(s) URL, or `-` for standard input.
    public init?(argument: String) {
        // Empty: an unset variable in a script; it named the working folder.
        if argument.isEmpty { return nil }
        if argument == "-" {
            self = .file(URL(fileURLWithPath: "/dev/stdin"))
            return
        }
        guard let source = try? FeedSource(argument) else { return nil }
        self = source
    }
}

extension StringProtocol {
    /// One or more ASCII digits and nothing else: how a number is written on storectl's command
    /// line (`Int(_:)` and `Double(_:)` also take a sign, an exponent or hexadecimal).
    var isPlainDigits: Bool {
        !isEmpty && utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
