import Foundation

/// One feed object being read by a `StoreRecord`'s `decode`: each accessor returns the field's
/// value, or nil after reporting the problem with its JSON path (`reminders[3].title`).
public struct FeedFields {
    /// The object's members.
    public let value: JSONValue
    /// The object's JSON path: `reminders[3]`.
    public let path: String
    /// Problems found so far: JSON path and message.
    private(set) var problems: [(path: String, message: String)] = []

    init(value: JSONValue, path: String) {
        self.value = value
        self.path = path
    }

    /// Whether the object has a member `name` (null included).
    public func has(_ name: String) -> Bool { value[name] != nil }

    /// Reports a problem with field `name` (or with the whole object when `name` is empty).
    public mutating func problem(_ name: String, _ message: String) {
        problems.append((name.isEmpty ? path : "\(path).\(name)", message))
    }

    /// A required string.
    public mutating func string(_ name: String) -> String? {
        switch value[name] {
        case .string(let text)?: return text
        case nil: problem(name, "is required (a string)")
        case let other?: problem(name, "expected a string, found \(Self.describe(other))")
        }
        return nil
    }

    /// An optional string: nil when absent or null; `valid` is false when a problem was reported.
    public mutating func optionalString(_ name: String) -> (value: String?, valid: Bool) {
        switch value[name] {
        case nil, .null?: return (nil, true)
        case .string(let text)?: return (text, true)
        case let other?:
            problem(name, "expected a string, found \(Self.describe(other))")
            return (nil, false)
        }
    }

    /// A required boolean.
    public mutating func bool(_ name: String) -> Bool? {
        switch value[name] {
        case .bool(let flag)?: return flag
        case nil: problem(name, "is required (true or false)")
        case let other?: problem(name, "expected true or false, found \(Self.describe(other))")
        }
        return nil
    }

    /// A required integer within `range`.
    public mutating func integer(_ name: String, in range: ClosedRange<Int> = Int.min...Int.max) -> Int? {
        switch value[name] {
        case .number(let text)?:
            if let number = Int(text), range.contains(number) { return number }
            problem(name, "\(text.prefix(40)) is not an integer from \(range.lowerBound) to \(range.upperBound)")
        case nil: problem(name, "is required (an integer)")
        case let other?: problem(name, "expected an integer, found \(Self.describe(other))")
        }
        return nil
    }

    /// A required calendar date, `YYYY-MM-DD`.
    public mutating func calendarDate(_ name: String) -> CalendarDate? {
        guard let text = string(name) else { return nil }
        guard let date = CalendarDate(text) else {
            problem(name, "'\(text.prefix(60))' is not a calendar date (YYYY-MM-DD, a day that exists)")
            return nil
        }
        return date
    }

    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .number(let text): "the number \(text.prefix(40))"
        case .string(let text): "the string '\(text.prefix(60))'"
        case .bool(let flag): String(flag)
        default: value.typeDescription
        }
    }
}
