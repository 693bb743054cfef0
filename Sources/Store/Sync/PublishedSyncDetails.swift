/// What a sync from a published feed (version 2, a manifest) read: the files after the store's
/// cursor, or the snapshot when the cursor could not be continued.
public struct PublishedSyncDetails: Sendable, Equatable {
    /// The manifest's generation: 1 to 64 lowercase letters, digits and `-`. A new generation
    /// (the publisher started over) makes the sync read the snapshot.
    public var generation: String
    /// The cursor the store had (nil: none for this generation).
    public var fromSequence: Int?
    /// The head the store is now at.
    public var toSequence: Int
    /// Files fetched besides the manifest (snapshot pages and segments).
    public var filesFetched = 0
    /// The bytes of those files, as received (the manifest's own bytes not included).
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
