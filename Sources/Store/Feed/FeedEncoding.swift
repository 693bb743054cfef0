import Foundation

// The feed's record shapes (Sources/Store/Store.docc/FeedFormat.md), used for export and for storectl's --json output, so a
// script can pipe one into the other.

extension Framework {
    /// The framework in the feed's shape (<doc:FeedFormat>), as export writes it.
    public var jsonValue: JSONValue {
        .object([
            "id": .string(id), "name": .string(name), "imageName": .string(imageName),
            "urlString": .string(urlString), "description": .string(description),
        ])
    }
}

extension OrderItem {
    /// The item in the feed's shape (<doc:FeedFormat>): its price as an exact decimal number.
    public var jsonValue: JSONValue {
        .object([
            "itemName": .string(itemName), "price": .number(price.description),
            "aisle": .integer(aisle), "quantity": .integer(quantity),
        ])
    }
}

extension Order {
    /// The feed's order shape; with `includingTotal`, also `total` (the exact sum; left out if
    /// it is out of bounds, which an order read from a store never is).
    public func jsonValue(includingTotal: Bool = false) -> JSONValue {
        var members = [
            JSONMember("id", .string(id)),
            JSONMember("placedAt", .string(Timestamp.format(placedAt))),
            JSONMember("items", .array(items.map(\.jsonValue))),
        ]
        if includingTotal, let total = try? total { members.append(JSONMember("total", .number(total.description))) }
        return .object(members)
    }
}

extension Event {
    /// The event in the feed's shape (<doc:FeedFormat>), as export writes it.
    public var jsonValue: JSONValue {
        var members = [
            JSONMember("id", .string(id)), JSONMember("title", .string(title)),
            JSONMember("date", .string(date.description)),
        ]
        if let notes { members.append(JSONMember("notes", .string(notes))) }
        return .object(members)
    }
}

extension CachedImage {
    /// The feed's image shape; with `includingData`, the bytes as base64 `data`.
    public func jsonValue(includingData: Bool) -> JSONValue {
        var members = [JSONMember("url", .string(url))]
        if let contentType { members.append(JSONMember("contentType", .string(contentType))) }
        if includingData { members.append(JSONMember("data", .string(data.base64EncodedString()))) }
        return .object(members)
    }
}

extension CachedImageInfo {
    /// The listing shape: the feed's `url` and `contentType`, plus size and times.
    package var jsonValue: JSONValue {
        var members = [JSONMember("url", .string(url))]
        if let contentType { members.append(JSONMember("contentType", .string(contentType))) }
        members += [
            JSONMember("size", .integer(size)),
            JSONMember("storedAt", .string(Timestamp.format(storedAt))),
            JSONMember("lastAccessAt", .string(Timestamp.format(lastAccessAt))),
        ]
        return .object(members)
    }
}

extension DateCount {
    package var jsonValue: JSONValue { .object(["date": .string(date.description), "count": .integer(count)]) }
}

extension MigrationStatus {
    package var jsonValue: JSONValue {
        var members = [
            JSONMember("version", .integer(version)), JSONMember("name", .string(name)),
            JSONMember("state", .string(state.rawValue)), JSONMember("checksum", .string(checksum)),
        ]
        members.append(JSONMember("appliedAt", appliedAt.map { .string(Timestamp.format($0)) } ?? .null))
        if let owner { members.append(JSONMember("owner", .string(owner))) }
        return .object(members)
    }
}
