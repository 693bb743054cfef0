/// A kind of record the store keeps: the four built-in ones (`.framework`, `.order`, `.event`,
/// `.image`) and any an app registers (a type conforming to `StoreRecord`, whose `kind` it is).
///
/// Open, not an enum: an app's kind is one more value. Its raw value is the singular name
/// (`framework`, `reminder`); the feed's array, the `deleted` member and reports use `plural`.
public struct RecordKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The singular name: `framework`, `reminder`.
    public let rawValue: String

    /// The kind named `rawValue` (an app's kind names itself in its `StoreRecord.kind`).
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Frameworks, keyed by id.
    public static let framework = RecordKind(rawValue: "framework")
    /// Orders, keyed by id, with their items.
    public static let order = RecordKind(rawValue: "order")
    /// Events, keyed by id, with a date.
    public static let event = RecordKind(rawValue: "event")
    /// Cached images, keyed by url.
    public static let image = RecordKind(rawValue: "image")

    /// Whether `text` is a plain name: a lowercase ASCII letter, then lowercase letters, digits
    /// and `_`. The rule for a registered kind's name, table and columns (they go into SQL and
    /// feed paths as they are), and for a kind named on storectl's command line.
    package static func isPlainName(_ text: String) -> Bool {
        guard let first = text.utf8.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else { return false }
        return text.utf8.allSatisfy {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: "_")
        }
    }

    /// The built-in kinds, in the feed's order.
    public static let allCases: [RecordKind] = [.framework, .order, .event, .image]

    /// The feed's array name and the report's: `frameworks`, `orders`, `events`, `images`,
    /// `reminders`.
    public var plural: String { rawValue + "s" }

    /// The name of the key field: `id`, or `url` for images.
    public var keyField: String { self == .image ? "url" : "id" }

    /// "an" before a name that starts with a vowel letter (`an order`, `an event`), else "a".
    var article: String { rawValue.first.map { "aeiouAEIOU".contains($0) } == true ? "an" : "a" }

    /// The raw value.
    public var description: String { rawValue }

    /// Decodes the raw value, a string.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the raw value, a string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
