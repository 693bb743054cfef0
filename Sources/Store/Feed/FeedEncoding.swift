import Foundation

// Listing shapes for storectl's --json output (each kind's feed shape is in its own folder under
// Records/, beside its decoding, so a script can pipe one into the other).

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
