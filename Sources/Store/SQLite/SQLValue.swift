import Foundation

/// A value as SQLite stores it: one of its five storage classes.
///
/// Bound as a statement's arguments and read back in a ``Row``. Write `"text"`, `42` or `nil`
/// for the common cases.
public enum SQLValue: Sendable, Hashable {
    /// SQL NULL.
    case null
    /// A 64-bit signed integer.
    case integer(Int64)
    /// An 8-byte IEEE floating-point number.
    case real(Double)
    /// UTF-8 text.
    case text(String)
    /// Bytes, stored exactly as given.
    case blob(Data)
}

extension SQLValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByNilLiteral {
    /// `"text"` is ``text(_:)``.
    public init(stringLiteral value: String) { self = .text(value) }
    /// `42` is ``integer(_:)``.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// `nil` is ``null``.
    public init(nilLiteral: ()) { self = .null }
}

extension SQLValue {
    /// The value as an integer, if it is one.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The value as text, if it is text.
    public var textValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }
}
