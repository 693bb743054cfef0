/// The rules every record must satisfy (<doc:FeedFormat>), shared by the tables and the feed validator.
enum RecordValidation {
    static let maximumIDLength = 200

    /// Why `id` is not a valid id, or nil if it is. Length counts Unicode scalars, as SQLite's
    /// `length()` does.
    static func problem(withID id: String) -> String? {
        if id.isEmpty { return "must not be empty" }
        // SQLite's length() stops at a NUL: an id starting with one failed the table's CHECK
        // with a raw "SQLite error 19", and C tools cut such ids short.
        if id.utf8.contains(0) { return "must not contain the NUL character (U+0000)" }
        // Every scalar takes at least one UTF-8 byte: a short id needs no counting.
        if id.utf8.count <= maximumIDLength { return nil }
        let length = id.unicodeScalars.count
        if length > maximumIDLength { return "is \(length) characters long; at most \(maximumIDLength) are allowed" }
        return nil
    }

    static func check(_ kind: RecordKind, id: String) throws {
        if let reason = problem(withID: id) {
            throw StoreError.invalidRecord(kind: kind, key: String(id.prefix(40)), field: "id", reason: reason)
        }
    }
}

extension RecordKind {
    /// Why `id` cannot be a record's id (empty, or longer than 200 characters), or nil: for
    /// callers that check arguments before opening a store.
    package static func idProblem(_ id: String) -> String? { RecordValidation.problem(withID: id) }
}

extension Framework {
    func validate() throws { try RecordValidation.check(.framework, id: id) }
}

extension Event {
    func validate() throws { try RecordValidation.check(.event, id: id) }
}

extension Order {
    func validate() throws {
        try RecordValidation.check(.order, id: id)
        if items.isEmpty {
            throw StoreError.invalidRecord(kind: .order, key: id, field: "items", reason: "an order needs at least one item")
        }
        if items.count > Self.maximumItems {
            throw StoreError.invalidRecord(
                kind: .order, key: id, field: "items",
                reason: "\(items.count) items are more than an order may hold (\(Self.maximumItems))")
        }
        for (index, item) in items.enumerated() {
            let field = "items[\(index)]"
            if item.price.minorUnits < 0 {
                throw StoreError.invalidRecord(
                    kind: .order, key: id, field: field + ".price", reason: "\(item.price) is negative")
            }
            if item.aisle < 0 {
                throw StoreError.invalidRecord(
                    kind: .order, key: id, field: field + ".aisle", reason: "\(item.aisle) is negative")
            }
            if item.quantity < 1 {
                throw StoreError.invalidRecord(
                    kind: .order, key: id, field: field + ".quantity", reason: "\(item.quantity) is less than 1")
            }
        }
        // Prices, quantities, subtotals and the total within bounds (checked, never trapping).
        _ = try total
    }
}
