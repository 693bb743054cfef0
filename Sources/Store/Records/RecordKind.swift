/// A kind of record the store keeps: the four built-in ones (`.framework`, `.order`, `.event`,
/// `.image`) and any an app registers (a type conforming to `StoreRecord`, whose `kind` it is).
///
/// Open, not an enum: an app's kind is one more value. Its raw value is the singular name
/// (`framework`, `reminder`); the feed's array, the `deleted` member and reports use `plural`.
public struct RecordKind: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    public static let framework = RecordKind(rawValue: "framework")
    public static let order = RecordKind(rawValue: "order")
    public static let event = RecordKind(rawValue: "event")
    public static let image = RecordKind(rawValue: "image")

    /// The built-in kinds, in the feed's order.
    public static let allCases: [RecordKind] = [.framework, .order, .event, .image]

    /// The feed's array name and the report's: `frameworks`, `orders`, `events`, `images`,
    /// `reminders`.
    public var plural: String { rawValue + "s" }

    /// The name of the key field: `id`, or `url` for images.
    public var keyField: String { self == .image ? "url" : "id" }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
