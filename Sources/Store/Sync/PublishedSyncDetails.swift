/// What a sync from a published feed (version 2, a manifest) read: the files after the store's
/// cursor, or the snapshot when the cursor could not be continued.
public struct PublishedSyncDetails: Sendable, Equatable {
    public var generation: String
    /// The cursor the store had (nil: none for this generation).
    public var fromSequence: Int?
    /// The head the store is now at.
    public var toSequence: Int
    /// Files fetched besides the manifest, and their bytes.
    public var filesFetched = 0
    public var bytesFetched = 0
    /// Why the snapshot was read instead of segments only; nil for an incremental sync.
    public var fullSyncReason: String?

    package var jsonValue: JSONValue {
        var members = [JSONMember("generation", .string(generation))]
        if let fromSequence { members.append(JSONMember("fromSequence", .integer(fromSequence))) }
        members += [
            JSONMember("toSequence", .integer(toSequence)), JSONMember("filesFetched", .integer(filesFetched)),
            JSONMember("bytesFetched", .integer(bytesFetched)),
        ]
        if let fullSyncReason { members.append(JSONMember("fullSyncReason", .string(fullSyncReason))) }
        return .object(members)
    }
}
