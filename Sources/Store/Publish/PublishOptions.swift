import Foundation

/// How `Store.publish(to:options:)` writes and compacts a published folder.
public struct PublishOptions: Sendable {
    /// Records per snapshot page.
    public var snapshotPageSize = 10_000
    /// How long a file stays in the folder after the last manifest that named it was replaced:
    /// a client that read that manifest may still be fetching it.
    public var gracePeriod: TimeInterval = 3600
    /// When segments are merged and folded into a new snapshot.
    public var compaction = CompactionPolicy()

    public init() {}
}

/// A log-structured merge of change segments, so the folder and a client's request count stay
/// bounded however often one publishes:
/// - after each publish, the newest segment is merged with the one before it while it covers
///   at least as many publishes (a binary counter: n publishes leave about log2(n) segments);
/// - the oldest segments are dropped while there are more than `maximumSegments`, or while they
///   hold more bytes than the snapshot (a client whose cursor is older reads the snapshot);
/// - a new snapshot is written, at the head, when the segments after the snapshot hold more than
///   `snapshotRefreshRatio` of its bytes, or when the oldest segment no longer reaches back to it.
public struct CompactionPolicy: Sendable {
    public var maximumSegments = 12
    public var snapshotRefreshRatio = 0.5

    public init() {}
}

/// What one publish did.
public struct PublishReport: Sendable, Equatable {
    public enum Outcome: String, Sendable {
        /// Nothing changed since the last publish: the folder was not touched.
        case unchanged
        /// One segment was appended.
        case segment
        /// A new snapshot was written (see `reason`).
        case snapshot
    }

    public var outcome: Outcome
    public var generation: String
    public var head: Int
    /// Why a snapshot was written, when one was.
    public var reason: String?
    /// Records and tombstones in the new segment.
    public var changes = 0
    public var filesWritten: [String] = []
    public var filesDeleted: [String] = []
    /// Files in the folder once done, the manifest included.
    public var filesInFolder = 0
}
