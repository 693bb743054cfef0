import Foundation

/// How `Store.publish(to:options:)` writes and compacts a published folder.
public struct PublishOptions: Sendable {
    /// Records per snapshot page (a value below 1 counts as 1).
    public var snapshotPageSize = 10_000
    /// The most bytes of a snapshot page, about (strings that need escaping take more): a record
    /// that would take a page past it starts the next (one larger than it has a page of its own). 32 MiB by
    /// default, well under a client's default cap on a file (`SyncOptions.maximumBytes`, 256
    /// MiB). Pages cut by count alone held whatever their records weighed: a store of twenty 20
    /// MB images (in the default cache budget, 512 MiB) made one 533 MB page, which no client
    /// with the default cap could sync, and its publish peaked at 1.6 GB.
    public var snapshotPageBytes = 32 << 20
    /// The most bytes of a change segment. A publish whose new segment (or a merge of two)
    /// would be larger does not list it: it writes a snapshot at the head instead, paged by
    /// `snapshotPageBytes`, and drops the older segments with it (clients whose cursor is older
    /// read the snapshot); two segments are not merged past it. 32 MiB by default, as a
    /// snapshot page: a segment is fetched whole, and twenty 20 MB images added in one publish
    /// made a 533 MB segment that no client with the default cap on a file
    /// (`SyncOptions.maximumBytes`, 256 MiB) could sync, though the snapshot beside it could.
    /// (A single record larger than it makes each publish that changes it write a snapshot.)
    public var segmentBytes = 32 << 20
    /// How long a file stays in the folder after the last manifest that named it was replaced:
    /// a client that read that manifest may still be fetching it.
    public var gracePeriod: TimeInterval = 3600
    /// When segments are merged and folded into a new snapshot.
    public var compaction = CompactionPolicy()

    /// The defaults: 10,000 records (or 32 MiB) per page, 32 MiB per segment, an hour's grace,
    /// the default compaction.
    public init() {}
}

/// A log-structured merge of change segments, so the folder and a client's request count stay
/// bounded however often one publishes:
/// - after each publish, the newest segment is merged with the one before it while it covers
///   at least as many publishes (a binary counter: n publishes leave about log2(n) segments)
///   and the merge stays within `PublishOptions.segmentBytes`;
/// - a segment larger than `PublishOptions.segmentBytes` is dropped with every older one;
/// - the oldest segments are dropped while there are more than `maximumSegments`, or while they
///   hold more bytes than the snapshot (a client whose cursor is older reads the snapshot);
/// - a new snapshot is written, at the head, when the segments after the snapshot hold more than
///   `snapshotRefreshRatio` of its bytes, or when the oldest segment no longer reaches back to it.
public struct CompactionPolicy: Sendable {
    /// The most change segments a manifest lists after merging; older ones are dropped (a
    /// client behind them reads the snapshot). 12 by default.
    public var maximumSegments = 12
    /// The share of the snapshot's bytes the segments after it may hold before a new snapshot
    /// is written: 0.5 by default (a client catching up never reads much more than half a
    /// snapshot in segments). 0 writes a snapshot on every publish that changed something.
    public var snapshotRefreshRatio = 0.5
    /// How large a snapshot's tombstone page (every record deleted since the generation began,
    /// kept so that a client falling back to the snapshot still deletes them) may grow, in
    /// bytes, or as large as the snapshot's records if they are larger: 1 MiB by default.
    /// Past it, the new snapshot starts a new generation, without tombstones: each client then
    /// syncs that snapshot in full once, and deletes the records it received from the folder
    /// that the snapshot no longer holds. (A store whose records come and go kept them all: 200
    /// publishes of 200 keys added then deleted made a 1 MB page beside 116 KB of records.)
    public var maximumTombstoneBytes = 1 << 20

    /// The defaults: 12 segments, a ratio of 0.5, 1 MiB of tombstones.
    public init() {}
}

/// What one publish did.
public struct PublishReport: Sendable, Equatable {
    /// What the publish wrote. The raw value is what `storectl publish` prints.
    public enum Outcome: String, Sendable {
        /// Nothing changed since the last publish: the folder was not touched.
        case unchanged
        /// One segment was appended.
        case segment
        /// A new snapshot was written (see `reason`).
        case snapshot
    }

    /// What was written.
    public var outcome: Outcome
    /// The folder's generation (the manifest's): made when the folder was first published to,
    /// and kept after.
    public var generation: String
    /// The manifest's head once done: the sequence number of the last publish that changed
    /// something, from 1 (the first snapshot).
    public var head: Int
    /// Why a snapshot was written, when one was.
    public var reason: String?
    /// Records and tombstones in the new segment.
    public var changes = 0
    /// The names of the files written, the manifest included, inside the folder.
    public var filesWritten: [String] = []
    /// The names of the files removed: those retired longer ago than the grace period.
    public var filesDeleted: [String] = []
    /// Files in the folder once done, the manifest included.
    public var filesInFolder = 0
}
