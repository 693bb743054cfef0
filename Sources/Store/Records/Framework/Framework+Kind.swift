import Foundation

// Frameworks as a kind: how the generic layers read, sync, export and observe them.

/// The framework kind's handler (see `TableBackedKind`).
struct FrameworkKind: TableBackedKind {
    var kind: RecordKind { .framework }
    var observedTables: [ObservedKindTable] {
        [ObservedKindTable(.framework, ObservedTable(table: "frameworks", keyColumn: "id"))]
    }

    func decode(_ fields: inout FeedFields) -> Framework? { Framework.decode(&fields) }
    func table(_ db: Database) -> FrameworkTable { db.frameworks }
    func feedValue(of record: Framework) -> JSONValue { record.jsonValue }
}

/// A framework is a `StoreRecord` too (one row of `frameworks`), so the generic API works for it
/// (`db.records(Framework.self)`); sync and export use its own table's statements
/// (`FrameworkKind`).
extension Framework: StoreRecord {
    /// `.framework`.
    public static var kind: RecordKind { .framework }
    /// `frameworks`.
    public static var table: String { "frameworks" }
    /// The columns of `frameworks`, the id first.
    public static var columns: [String] { ["id", "name", "image_name", "url_string", "description"] }
    /// The id.
    public var key: String { id }
    /// Every field as text, in `columns` order.
    public var columnValues: [SQLValue] {
        [.text(id), .text(name), .text(imageName), .text(urlString), .text(description)]
    }

    /// A framework from its stored row.
    public init(columnValues values: [SQLValue]) throws {
        self.init(
            id: values[0].textValue ?? "", name: values[1].textValue ?? "", imageName: values[2].textValue ?? "",
            urlString: values[3].textValue ?? "", description: values[4].textValue ?? "")
    }

    /// The feed shape: `jsonValue`.
    public var feedValue: JSONValue { jsonValue }

    /// Reads a framework from its feed object (the id already read and checked into
    /// `fields.key`): every field a string, each problem reported with its JSON path.
    public static func decode(_ fields: inout FeedFields) -> Framework? {
        let name = fields.string("name")
        let imageName = fields.string("imageName")
        let urlString = fields.string("urlString")
        let description = fields.string("description")
        guard let name, let imageName, let urlString, let description else { return nil }
        return Framework(id: fields.key, name: name, imageName: imageName, urlString: urlString, description: description)
    }

    /// The framework in the feed's shape (<doc:FeedFormat>), as export writes it.
    public var jsonValue: JSONValue {
        .object([
            "id": .string(id), "name": .string(name), "imageName": .string(imageName),
            "urlString": .string(urlString), "description": .string(description),
        ])
    }
}

extension Feed {
    /// The feed's frameworks, in document order.
    public var frameworks: [Framework] { records(of: Framework.self) }
}
