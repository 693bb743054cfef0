/// What one sync did (or, with dry-run, would do).
public struct SyncReport: Sendable, Equatable {
    public enum Status: String, Sendable, Codable {
        /// The feed was reconciled and committed.
        case applied
        /// The server answered 304 Not Modified: nothing to do, nothing parsed.
        case upToDate = "up-to-date"
        /// Computed, not written.
        case dryRun = "dry-run"
    }

    /// Per record kind.
    public struct Counts: Sendable, Equatable {
        public var inserted = 0
        public var updated = 0
        /// Local records kept although the feed differs (conflicts, or keep-existing).
        public var kept = 0
        public var unchanged = 0
        public var deleted = 0

        public init() {}
    }

    /// The image cache's side.
    public struct ImageCounts: Sendable, Equatable {
        /// Stored from inline `data`.
        public var stored = 0
        /// Already in the cache: neither stored nor downloaded.
        public var alreadyCached = 0
        public var downloaded = 0
        /// Downloads that failed; retried next sync.
        public var failed = 0
        public var deleted = 0

        public init() {}
    }

    /// One image that could not be downloaded.
    public struct ImageFailure: Sendable, Equatable {
        public var url: String
        public var reason: String
    }

    public var status: Status
    public var source: String
    public var policy: SyncPolicy
    public var frameworks = Counts()
    public var orders = Counts()
    public var events = Counts()
    /// The app kinds' counts (`Store.Configuration.recordTypes`), per kind.
    public var appKinds: [RecordKind: Counts] = [:]
    public var images = ImageCounts()
    /// Records kept because they changed on both sides (three-way) — kind and key.
    public var conflicts: [Change] = []
    public var imageFailures: [ImageFailure] = []
    /// For a published feed (a manifest): the files read, and why a full sync if it was one.
    public var published: PublishedSyncDetails?

    public init(status: Status, source: String, policy: SyncPolicy) {
        self.status = status
        self.source = source
        self.policy = policy
    }

    subscript(kind: RecordKind) -> Counts {
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

    /// `{"status": ..., "frameworks": {...}, "orders": {...}, "events": {...}, "images": {...}}`.
    package var jsonValue: JSONValue {
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
        members += [
            JSONMember(
                "images",
                .object([
                    "stored": .integer(images.stored), "alreadyCached": .integer(images.alreadyCached),
                    "downloaded": .integer(images.downloaded), "failed": .integer(images.failed),
                    "deleted": .integer(images.deleted),
                ]))
        ]
        if !conflicts.isEmpty {
            members.append(
                JSONMember(
                    "conflicts",
                    .array(
                        conflicts.map {
                            .object(["kind": .string($0.kind.rawValue), "key": .string($0.key)])
                        })))
        }
        if !imageFailures.isEmpty {
            members.append(
                JSONMember(
                    "imageFailures",
                    .array(
                        imageFailures.map {
                            .object(["url": .string($0.url), "reason": .string($0.reason)])
                        })))
        }
        if let published { members.append(JSONMember("published", published.jsonValue)) }
        return .object(members)
    }
}
