/// The four kinds of record the store keeps.
public enum RecordKind: String, Sendable, Codable, CaseIterable, CustomStringConvertible {
    case framework
    case order
    case event
    case image

    /// The feed's array name and the table's: `frameworks`, `orders`, `events`, `images`.
    public var plural: String { rawValue + "s" }

    /// The name of the key field: `id`, or `url` for images.
    public var keyField: String { self == .image ? "url" : "id" }

    public var description: String { rawValue }
}
