import Foundation

/// A source the store keeps sync state for (`Store.syncSources()`): the validators of its pages,
/// the cursor of a published feed, and the hash of each record as last received from it.
public struct SyncSourceSummary: Sendable, Equatable {
    /// The source's key (`FeedSource.key`): the absolute path, or the URL without credentials.
    public var source: String
    /// When it was last synced (applied or up to date), if ever.
    public var lastSyncedAt: Date?
    /// The policy of its last applied sync, if any.
    public var policy: SyncPolicy?
    /// The records (and images) the store remembers having received from it.
    public var receivedRecords: Int

    /// A summary with these values.
    public init(source: String, lastSyncedAt: Date?, policy: SyncPolicy?, receivedRecords: Int) {
        self.source = source
        self.lastSyncedAt = lastSyncedAt
        self.policy = policy
        self.receivedRecords = receivedRecords
    }

    /// `{"source", "lastSyncedAt", "policy", "receivedRecords"}`; absent values left out.
    package var jsonValue: JSONValue {
        var members = [JSONMember("source", .string(source))]
        if let lastSyncedAt { members.append(JSONMember("lastSyncedAt", .string(Timestamp.format(lastSyncedAt)))) }
        if let policy { members.append(JSONMember("policy", .string(policy.rawValue))) }
        members.append(JSONMember("receivedRecords", .integer(receivedRecords)))
        return .object(members)
    }
}
