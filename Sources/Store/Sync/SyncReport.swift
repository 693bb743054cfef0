/// What one sync did (or, with dry-run, would do): per record kind, how many records the
/// feed inserted, updated, left or deleted, and what happened to images. A dry run's report is
/// the one the same sync would return if it ran now. Also kept, as JSON, in the sync history.
public struct SyncReport: Sendable, Equatable {
    /// How the sync ended. Its raw value (`applied`, `up-to-date`, `dry-run`) is what storectl
    /// and the sync history print.
    public enum Status: String, Sendable, Codable {
        /// The feed was reconciled and committed.
        case applied
        /// The server answered 304 Not Modified: nothing to do, nothing parsed.
        case upToDate = "up-to-date"
        /// Computed, not written.
        case dryRun = "dry-run"
    }

    /// Per record kind: each record of the feed is counted once, in `inserted`, `updated`,
    /// `kept` or `unchanged`; each tombstone of a local record once, in `deleted` or `kept`; a
    /// tombstone of a record the store does not have is not counted.
    public struct Counts: Sendable, Equatable {
        /// Records the feed has and the store did not.
        public var inserted = 0
        /// Local records replaced by the feed's different version (per the policy).
        public var updated = 0
        /// Local records kept although the feed differs or deletes them (conflicts, or
        /// keep-existing).
        public var kept = 0
        /// Records for which the feed brings nothing new (equal to the local one or, three-way,
        /// to what was received last): nothing written.
        public var unchanged = 0
        /// Local records removed by a tombstone in the feed's `deleted` member.
        public var deleted = 0

        /// All zero.
        public init() {}
    }

    /// The image cache's side.
    public struct ImageCounts: Sendable, Equatable {
        /// Stored from inline `data`.
        public var stored = 0
        /// Already in the cache: neither stored nor downloaded.
        public var alreadyCached = 0
        /// Fetched from their url (records without inline `data`) and stored.
        public var downloaded = 0
        /// Downloads that failed; retried next sync.
        public var failed = 0
        /// Cached images removed by a tombstone in the feed.
        public var deleted = 0

        /// All zero.
        public init() {}
    }

    /// One image that could not be downloaded.
    public struct ImageFailure: Sendable, Equatable {
        /// The image's url, as the feed gave it.
        public var url: String
        /// Why, for a person: an HTTP status, a timeout, a size over the limit, ...
        public var reason: String
    }

    /// How the sync ended.
    public var status: Status
    /// The source's key (`FeedSource.key`): the absolute path, or the URL without credentials.
    public var source: String
    /// The policy the sync ran with.
    public var policy: SyncPolicy
    /// The frameworks' counts.
    public var frameworks = Counts()
    /// The orders' counts (an order counts once, with its items).
    public var orders = Counts()
    /// The events' counts.
    public var events = Counts()
    /// The app kinds' counts (`Store.Configuration.recordTypes`), per kind.
    public var appKinds: [RecordKind: Counts] = [:]
    /// The image cache's counts.
    public var images = ImageCounts()
    /// Records kept because they changed on both sides (three-way) — kind and key.
    public var conflicts: [Change] = []
    /// Each image whose download failed, in the feed's order (`images.failed` of them).
    public var imageFailures: [ImageFailure] = []
    /// For a published feed (a manifest): the files read, and why a full sync if it was one.
    public var published: PublishedSyncDetails?
    /// Why the sync's last bookkeeping write failed, after its records (and the images it
    /// downloaded) were committed: the history row's image counts, the source's validators and
    /// cursor, and what the downloaded images were received as (a full disk, say). Nothing
    /// applied is undone; the next sync reads the feed again, as after an image failure, and
    /// finds the records and images already there. nil when every write succeeded.
    public var unrecorded: String?

    /// A report with every count at zero, no conflict and no failure.
    public init(status: Status, source: String, policy: SyncPolicy) {
        self.status = status
        self.source = source
        self.policy = policy
    }

    /// The counts of any kind, built-in or an app's, by its `RecordKind`: `report[.framework]`
    /// is `frameworks`, `report[Note.kind]` the app kind's entry in `appKinds`. A kind the
    /// sync did not touch, and `.image` (whose counts are `images`), read as all zeros; setting
    /// `.image` changes nothing.
    public subscript(kind: RecordKind) -> Counts {
        get {
            switch kind {
            case .framework: frameworks
            case .order: orders
            case .event: events
            case .image: Counts()
            default: appKinds[kind] ?? Counts()
            }
        }
        set {
            switch kind {
            case .framework: frameworks = newValue
            case .order: orders = newValue
            case .event: events = newValue
            case .image: break
            default: appKinds[kind] = newValue
            }
        }
    }

    /// `{"status": ..., "frameworks": {...}, "orders": {...}, "events": {...}, "images": {...}}`,
    /// as one value: what the sync history stores (its lists cut to 100 each). `writeJSON` writes
    /// the same document in pieces, for a report of any length.
    package var jsonValue: JSONValue {
        var members = leadingJSONMembers
        if !conflicts.isEmpty {
            members.append(JSONMember("conflicts", .array(conflicts.map(Self.conflictJSON))))
        }
        if !imageFailures.isEmpty {
            members.append(JSONMember("imageFailures", .array(imageFailures.map(Self.imageFailureJSON))))
        }
        return .object(members + trailingJSONMembers)
    }

    /// The bytes `writer.string(jsonValue)` gives, handed to `write` in pieces as they are made:
    /// the counts whole, then each conflict and image failure on its own. Why: a three-way sync
    /// can report a conflict for every record, and `storectl sync --json` made the whole report
    /// a `JSONValue` tree, then one text, then its bytes, each holding every conflict again
    /// (hundreds of bytes a conflict on top of the report). Nothing but the piece being written
    /// is held here.
    package func writeJSON(_ writer: JSONWriter, to write: (String) throws -> Void) throws {
        var object = JSONObjectWriter(writer)
        for member in leadingJSONMembers { try write(object.member(member.key, member.value)) }
        // Each list as `jsonValue` has it: left out when empty, else its elements in order.
        func list<Element>(_ key: String, _ elements: [Element], _ json: (Element) -> JSONValue) throws {
            guard !elements.isEmpty else { return }
            try write(object.key(key))
            var array = JSONArrayWriter(writer, depth: 1)
            for element in elements { try write(array.element(json(element))) }
            try write(array.end())
        }
        try list("conflicts", conflicts, Self.conflictJSON)
        try list("imageFailures", imageFailures, Self.imageFailureJSON)
        for member in trailingJSONMembers { try write(object.member(member.key, member.value)) }
        try write(object.end())
    }

    /// The members before the lists: status, source, policy, every kind's counts, the images'.
    private var leadingJSONMembers: [JSONMember] {
        func counts(_ c: Counts) -> JSONValue {
            .object([
                "inserted": .integer(c.inserted), "updated": .integer(c.updated), "kept": .integer(c.kept),
                "unchanged": .integer(c.unchanged), "deleted": .integer(c.deleted),
            ])
        }
        var members = [
            JSONMember("status", .string(status.rawValue)),
            JSONMember("source", .string(source)),
            JSONMember("policy", .string(policy.rawValue)),
            JSONMember("frameworks", counts(frameworks)),
            JSONMember("orders", counts(orders)),
            JSONMember("events", counts(events)),
        ]
        for kind in appKinds.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            members.append(JSONMember(kind.plural, counts(appKinds[kind]!)))
        }
        members.append(
            JSONMember(
                "images",
                .object([
                    "stored": .integer(images.stored), "alreadyCached": .integer(images.alreadyCached),
                    "downloaded": .integer(images.downloaded), "failed": .integer(images.failed),
                    "deleted": .integer(images.deleted),
                ])))
        return members
    }

    /// The members after the lists, when there are any: the published feed's details, and why
    /// the sync was not recorded.
    private var trailingJSONMembers: [JSONMember] {
        var members: [JSONMember] = []
        if let published { members.append(JSONMember("published", published.jsonValue)) }
        if let unrecorded { members.append(JSONMember("unrecorded", .string(unrecorded))) }
        return members
    }

    private static func conflictJSON(_ conflict: Change) -> JSONValue {
        .object(["kind": .string(conflict.kind.rawValue), "key": .string(conflict.key)])
    }

    private static func imageFailureJSON(_ failure: ImageFailure) -> JSONValue {
        .object(["url": .string(failure.url), "reason": .string(failure.reason)])
    }
}
