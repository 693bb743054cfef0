import Foundation

/// The keys a later file of one manifest sync holds again, so that the sync applies each key's
/// last state once, reconciled against the store as it was before the sync.
///
/// A manifest sync reads the snapshot (or nothing) and then the segments after the cursor, in
/// order. Applied file after file, a record that the snapshot (or an earlier segment) inserted
/// and a later segment changed looked, by then, like a local record that differs from the feed:
/// keep-existing kept its first value, and the cursor moved past the change for good. With the
/// superseded occurrences set aside, the record is new to the store and inserted as the head has
/// it. Superseded records are still validated; they are only not applied.
///
/// Groups: the snapshot's pages are group 0, the first segment group 1, and so on. Only the
/// segments' keys are held (the snapshot's are never superseded by an earlier file). Keys are
/// compared byte for byte, as SQLite and the validator compare them (`é` written NFC and NFD
/// are two keys), and held in memory up to `memoryLimit`, then in a private temporary database
/// on disk, like the validator's own keys (`FeedKeyRegistry`).
///
/// Built before the sync's write transaction, then only read, by the sync's reader thread.
final class SupersededKeys: @unchecked Sendable {
    // Why @unchecked Sendable is safe: every stored property is written only in `init`; after
    // it, `isSuperseded` only reads, from one thread at a time (the pipeline's reader thread,
    // to which the value is handed once). The disk database, if any, is used by that thread
    // alone from then on (SQLite allows a connection on any thread, one at a time).
    private var memory: [RecordKind: [ExactKey: Int]] = [:]
    private var memoryCount = 0
    private let memoryLimit: Int
    private var disk: Database?

    /// Whether no key is superseded (nothing to look up).
    private(set) var isEmpty = true

    /// No key is superseded.
    init() {
        memoryLimit = 0
    }

    /// Reads the keys of the segments among `pages` (in sync order; `isSegment` starts a new
    /// group). Throws when a segment's keys cannot be read (a read error, a full disk): the
    /// sync fails rather than apply a key in an older state. A segment that does not validate
    /// leaves the rest unread: the sync's own pass then reports its problems and fails.
    init(
        pages: [(file: PublishedFileLoader.Loaded, isSegment: Bool)], kinds: [any RecordKindHandler],
        memoryLimit: Int = FeedKeyRegistry.defaultMemoryLimit
    ) throws {
        self.memoryLimit = memoryLimit
        let groups = pages.filter(\.isSegment).count + (pages.first?.isSegment == false ? 1 : 0)
        guard groups > 1 else { return }
        var group = 0
        for (file, isSegment) in pages where isSegment {
            group += 1
            var validator = FeedValidator(kinds: kinds)
            validator.acceptsSegments = true
            var collector = Collector(group: group, keys: self)
            try validator.add(descriptor: file.descriptorAtStart(), source: file.name, pageURL: file.url, into: &collector)
            if let failure = collector.failure { throw failure }
            if validator.hasProblems { break }
        }
    }

    /// Whether a later group than `group` holds the key: its occurrence in `group` is superseded.
    func isSuperseded(_ kind: RecordKind, _ key: String, inGroup group: Int) throws -> Bool {
        guard let last = try lastGroup(kind, key) else { return false }
        return last > group
    }

    private func lastGroup(_ kind: RecordKind, _ key: String) throws -> Int? {
        if let group = memory[kind]?[ExactKey(key)] { return group }
        guard let disk else { return nil }
        let find = try disk.cachedStatement(literal: "SELECT grp FROM keys WHERE kind = ? AND key = ?")
        defer { find.reset() }
        try find.bind(kind.rawValue, at: 1)
        try find.bind(key, at: 2)
        return try find.step() ? find.int(0) : nil
    }

    /// Notes that `group` holds the key (groups come in ascending order: the last one wins).
    fileprivate func note(_ kind: RecordKind, _ key: String, group: Int) throws {
        isEmpty = false
        let exact = ExactKey(key)
        if memory[kind]?[exact] != nil || (disk == nil && memoryCount < memoryLimit) {
            if memory[kind, default: [:]].updateValue(group, forKey: exact) == nil { memoryCount += 1 }
            return
        }
        let db: Database
        if let disk {
            db = disk
        } else {
            db = try Database.scratch(
                schema:
                    "CREATE TABLE keys (kind TEXT NOT NULL, key TEXT NOT NULL, grp INTEGER NOT NULL, PRIMARY KEY (kind, key)) WITHOUT ROWID"
            )
            disk = db
        }
        let upsert = try db.cachedStatement(
            literal: "INSERT INTO keys VALUES (?, ?, ?) ON CONFLICT (kind, key) DO UPDATE SET grp = excluded.grp")
        defer { upsert.reset() }
        try upsert.bind(kind.rawValue, at: 1)
        try upsert.bind(key, at: 2)
        try upsert.bind(Int64(group), at: 3)
        _ = try upsert.step()
    }

    /// Collects the keys of one segment.
    private struct Collector: FeedSink {
        let group: Int
        let keys: SupersededKeys
        var failure: (any Error)?

        mutating func receive(_ fields: inout FeedFields, of handler: any RecordKindHandler) throws {
            try note(handler.kind, fields.key)
        }

        mutating func receiveTombstone(_ key: String, of handler: any RecordKindHandler) throws {
            try note(handler.kind, key)
        }

        private mutating func note(_ kind: RecordKind, _ key: String) throws {
            do {
                try keys.note(kind, key, group: group)
            } catch {
                failure = error
                throw error
            }
        }
    }
}
