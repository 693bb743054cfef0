import Foundation

/// Writes one publish of a store into a folder (<doc:FeedFormat>, version 2), from inside one
/// read transaction, so everything it writes is one consistent state of the store.
///
/// 1. What changed since the last publish is read from the change log (transactions after the
///    manifest's `publisher.transaction`): the keys per kind; each key's current row is the
///    record, an absent row a tombstone. A new snapshot (and generation) is written instead when
///    there is no manifest yet, when it was published from another store, or when the log no
///    longer reaches back to it.
/// 2. The new segment, merged segments and any new snapshot are written to temporary files,
///    flushed and renamed into place under names made of their content's SHA-256 (never reused
///    for other bytes).
/// 3. The new manifest is written the same way, last: the one atomic step that switches clients
///    to the new state. A publish killed before it leaves the previous manifest, whose files are
///    all still there.
/// 4. Files that no manifest has named for the grace period are deleted: only files named as a
///    publisher names them (`PublishedFileName`), never the store's own.
///
/// The whole publish holds the folder's `PublishLock`, taken before the read transaction began:
/// one publish per folder at a time, each reading the store as the last one left it.
struct Publisher {
    let folder: URL
    /// The store's file (nil in memory), never deleted from the folder whatever its name.
    var storePath: String?
    let options: PublishOptions
    let imageBudget: Int
    let now: Date
    /// The store's kinds (built-in and registered), each published in its own arrays, in order.
    var handlers: [any RecordKindHandler] = RecordKinds.builtIn
    /// The configuration's app migrations' namespace, if any (see `publish`).
    var appNamespace: String?

    private var kinds: [RecordKind] { handlers.map(\.kind) }

    private var manifestPath: String { folder.appendingPathComponent(PublishedManifest.fileName).path }

    /// Publishes what `db` (a read transaction begun once `lock` was held) holds.
    func publish(db: Database, holding lock: PublishLock) throws -> PublishReport {
        // A program that does not register an app's kinds (storectl on the app's store) would
        // write a snapshot without the app's records, and merge segments dropping them: the
        // app's clients would never receive them. The app's tables come from its migrations.
        if let other = try Migrator.otherAppNamespaces(db, besides: appNamespace).first {
            throw PublishError(
                path: folder.path,
                reason:
                    "the store holds the tables of the app '\(other)' (its migrations), whose record kinds this program "
                    + "does not register: a publish would leave their records out; publish from the app")
        }
        defer { withExtendedLifetime(lock) {} }
        let previous = try readPreviousManifest()
        let storeID = try db.query("SELECT id FROM store_identity") { $0.text(0) }.first ?? ""
        let log = ChangeLogTable(db: db)
        let latest = try log.latestTransaction()
        let earliest = try db.query("SELECT coalesce(min(tx), 0) FROM change_log") { $0.int64(0) }[0]

        guard let previous else {
            return try newGeneration(
                db, storeID: storeID, transaction: latest, previous: nil, reason: "the folder had no manifest")
        }
        if previous.storeID != storeID {
            return try newGeneration(
                db, storeID: storeID, transaction: latest, previous: previous,
                reason: "the folder was published from another store")
        }
        if previous.transaction > latest {
            return try newGeneration(
                db, storeID: storeID, transaction: latest, previous: previous,
                reason: "the store's change log is behind the folder's manifest")
        }
        // A copy of this store (a backup restored, a file copied) has its identity and its
        // transaction numbers, not its history: the entry the manifest's transaction names
        // tells them apart. Without this, a copy that had written as many transactions since
        // as the folder's publisher reported the folder "unchanged" while it served another
        // state. (No digest in the manifest, or no entry left to compare: nothing to tell.)
        if let recorded = previous.transactionDigest, let ours = try Self.digest(ofTransaction: previous.transaction, in: db),
            ours != recorded
        {
            return try newGeneration(
                db, storeID: storeID, transaction: latest, previous: previous,
                reason: "the folder was published from another copy of this store, whose history differs")
        }
        if latest == previous.transaction { return unchanged(previous) }
        if earliest > previous.transaction + 1 {
            return try newGeneration(
                db, storeID: storeID, transaction: latest, previous: previous,
                reason: "the change log no longer reaches back to the last publish")
        }

        // 1. What changed: the keys the log names after the last publish. Only the keys: each
        // record's value is read as the segment is written, so a publish holds no more values
        // than fit in a segment, however many records changed. Byte for byte, as SQLite compares
        // keys (`é` written NFC and NFD are two records).
        var keys: [RecordKind: Set<ExactKey>] = [:]
        try log.forEachChange(after: previous.transaction) { keys[$0.kind, default: []].insert(ExactKey($0.key)) }
        // Every changed key is a record or a tombstone of the new segment.
        let changes = keys.values.reduce(0) { $0 + $1.count }
        // Transactions that changed no record (a sync with nothing new): nothing to publish.
        if changes == 0 { return unchanged(previous) }
        // Before anything is written: the segment writes the registered kinds only.
        for kind in keys.keys { _ = try handler(of: kind) }

        // 2. The new segment, then compaction. A new segment over the bound is never listed: its
        // writing stops there (see `PublishedSegmentWriter`), and it goes with every older one
        // below, as a listed segment over the bound does.
        let head = previous.head + 1
        var written: [String: Data] = [:]
        var segments = previous.segments
        var oversized: (from: Int, to: Int, size: String)?
        let writer = PublishedSegmentWriter(
            generation: previous.generation, from: head, to: head, kinds: kinds, limit: options.segmentBytes)
        switch try writer.write(keys: keys, value: { kind, key in try currentValue(db, kind: kind, key: key) }) {
        case .fits(let data):
            segments.append(store(data, from: head, to: head, into: &written))
        case .oversized(let bytesWritten):
            oversized = (head, head, "at least \(bytesWritten) bytes")
            segments.removeAll()
        }
        while segments.count >= 2 {
            let newer = segments[segments.count - 1], older = segments[segments.count - 2]
            guard newer.to - newer.from >= older.to - older.from else { break }
            // `newer` is within the bound (the new segment, or a merge kept below): one over it
            // was never written whole, let alone parsed and merged for nothing.
            var merged = try content(of: older, written: written)
            merged.merge(try content(of: newer, written: written))
            var mergedFile: [String: Data] = [:]
            let combined = store(
                merged.encoded(generation: previous.generation, from: older.from, to: newer.to, kinds: kinds),
                from: older.from, to: newer.to, into: &mergedFile)
            // Not merged past the bound: the two stay as they are (each within it, or dropped below).
            guard combined.file.size <= options.segmentBytes else { break }
            written[older.file.name] = nil
            written[newer.file.name] = nil
            written.merge(mergedFile) { $1 }
            segments.removeLast(2)
            segments.append(combined)
        }
        // A segment over the bound is never listed: a client fetches a segment whole, and one
        // larger than its cap on a file (256 MiB by default) refused the manifest (twenty 20 MB
        // images added in one publish made a 533 MB segment). It goes with every older one
        // ("segments" must be consecutive, the last ending at `head`): clients whose cursor is
        // older read the snapshot, written at `head` below when the rest no longer reach it.
        if let index = segments.lastIndex(where: { $0.file.size > options.segmentBytes }) {
            let segment = segments[index]
            oversized = (segment.from, segment.to, "\(segment.file.size) bytes")
            for dropped in segments[...index] { written[dropped.file.name] = nil }
            segments.removeFirst(index + 1)
        }

        var manifest = previous
        manifest.head = head
        manifest.transaction = latest
        manifest.transactionDigest = try Self.digest(ofTransaction: latest, in: db)
        manifest.segments = segments
        var outcome = PublishReport.Outcome.segment
        var reason: String?
        let policy = options.compaction
        let snapshotBytes = Self.totalSize(previous.snapshotFiles.map(\.size))
        dropOldSegments(&manifest, snapshotBytes: snapshotBytes)
        let afterSnapshot = Self.totalSize(manifest.segments.filter { $0.to > manifest.snapshotSequence }.map(\.file.size))
        let reaches = (manifest.segments.first.map { $0.from - 1 } ?? head) <= manifest.snapshotSequence
        if !reaches || Double(afterSnapshot) > policy.snapshotRefreshRatio * Double(snapshotBytes) {
            // Tombstones since the generation began stay in the snapshot: a client that falls
            // back to it still deletes what was deleted while it was away.
            let tombstonePage = previous.snapshotFiles[previous.snapshotFiles.count - 1]
            var tombstones = try PublishedSegment.parse(try readFile(tombstonePage), source: tombstonePage.name, kinds: kinds)
                .deleted
            for old in previous.segments where old.to > previous.snapshotSequence {
                for (kind, deleted) in try content(of: old, written: written).deleted {
                    tombstones[kind, default: []].formUnion(deleted)
                }
            }
            // The new segment's tombstones are its keys that have no row now. Every changed key
            // is given: `writeSnapshot` keeps, of the keys it is given, only those with no row,
            // so the page is the same, and a segment whose writing stopped at the bound (its
            // later tombstones never looked at) needs no second pass over its keys.
            for (kind, changed) in keys { tombstones[kind, default: []].formUnion(changed) }
            manifest.snapshotSequence = head
            manifest.snapshotFiles = try writeSnapshot(
                db, generation: manifest.generation, sequence: head, tombstones: tombstones,
                into: &written)
            // The tombstone page is the last; the pages before it hold the records. Its pages,
            // written already, are strays once the new generation's manifest is in place (removed
            // after the grace period).
            let tombstoneBytes = manifest.snapshotFiles.last?.size ?? 0
            let recordBytes = Self.totalSize(manifest.snapshotFiles.dropLast().map(\.size))
            if tombstoneBytes > max(policy.maximumTombstoneBytes, recordBytes) {
                return try newGeneration(
                    db, storeID: storeID, transaction: latest, previous: previous,
                    reason: "the snapshot's tombstones (\(tombstoneBytes) bytes) outgrew its records")
            }
            outcome = .snapshot
            if let oversized, !reaches {
                reason =
                    "the segment \(oversized.from)-\(oversized.to) (\(oversized.size)) is larger than the bound "
                    + "of \(options.segmentBytes) bytes per segment"
            } else {
                reason =
                    reaches ? "the segments outgrew the snapshot" : "the oldest retained segment no longer reaches the snapshot"
            }
            dropOldSegments(&manifest, snapshotBytes: Self.totalSize(manifest.snapshotFiles.map(\.size)))
        }
        _ = policy
        let snapshotWritten = outcome == .snapshot ? manifest.snapshotFiles.map(\.name) : []
        var report = try commit(manifest, previous: previous, written: written, snapshotWritten: snapshotWritten)
        report.outcome = outcome
        report.reason = reason
        report.changes = changes
        return report
    }

    // MARK: Steps

    private func unchanged(_ manifest: PublishedManifest) -> PublishReport {
        PublishReport(outcome: .unchanged, generation: manifest.generation, head: manifest.head, filesInFolder: countFiles())
    }

    private func newGeneration(
        _ db: Database, storeID: String, transaction: Int64, previous: PublishedManifest?,
        reason: String
    ) throws -> PublishReport {
        let generation = RandomIdentifier.uuidString().lowercased()
        var written: [String: Data] = [:]
        let files = try writeSnapshot(db, generation: generation, sequence: 1, tombstones: [:], into: &written)
        let manifest = PublishedManifest(
            generation: generation, head: 1, snapshotSequence: 1, snapshotFiles: files, segments: [],
            storeID: storeID, transaction: transaction, transactionDigest: try Self.digest(ofTransaction: transaction, in: db),
            retired: previous?.retired ?? [])
        var report = try commit(manifest, previous: previous, written: written, snapshotWritten: files.map(\.name))
        report.outcome = .snapshot
        report.reason = reason
        return report
    }

    /// Drops the oldest segments while there are too many or they outweigh the snapshot.
    private func dropOldSegments(_ manifest: inout PublishedManifest, snapshotBytes: Int) {
        // The newest segments that fit both bounds, found from the end in one pass, and the rest
        // dropped at once: dropping one at a time and summing them all again after each took
        // seconds for a manifest of 40,000 segments (a folder's manifest names up to 100,000).
        let kept = Self.newestKept(
            sizes: manifest.segments.map(\.file.size), maximumCount: options.compaction.maximumSegments,
            maximumBytes: max(snapshotBytes, 64 << 10))
        manifest.segments.removeFirst(manifest.segments.count - kept)
    }

    /// How many of the newest segments (`sizes`, oldest first) to keep: as many as stay within
    /// `maximumCount` and `maximumBytes` together, and at least one (the newest) if there is one.
    static func newestKept(sizes: [Int], maximumCount: Int, maximumBytes: Int) -> Int {
        var kept = 0
        var bytes = 0
        for size in sizes.reversed() {
            let (sum, overflow) = bytes.addingReportingOverflow(size)
            guard kept < maximumCount, !overflow, sum <= maximumBytes else { break }
            kept += 1
            bytes = sum
        }
        return max(kept, min(1, sizes.count))
    }

    /// The sum of file sizes, at most `Int.max`: a manifest may name 100,000 files of up to 2^53
    /// bytes each, and a sum that overflowed trapped.
    static func totalSize(_ sizes: some Sequence<Int>) -> Int {
        sizes.reduce(0) { total, size in
            let (sum, overflow) = total.addingReportingOverflow(size)
            return overflow ? Int.max : sum
        }
    }

    /// Writes the new files, then the manifest (the atomic step), then deletes what has been
    /// unnamed for the grace period. `snapshotWritten`: the snapshot pages this publish wrote
    /// (already in place), for the report.
    private func commit(
        _ proposed: PublishedManifest, previous: PublishedManifest?, written: [String: Data], snapshotWritten: [String]
    ) throws -> PublishReport {
        var manifest = proposed
        let named = Set(manifest.files.map(\.name))
        // Files no longer named start their grace period now; so do strays (a killed publish's).
        var retired = (previous?.retired ?? []).filter { !named.contains($0.name) }
        var known = Set(retired.map(\.name))
        for name in (previous?.files.map(\.name) ?? []) + ownFiles() where !named.contains(name) && !known.contains(name) {
            retired.append(.init(name: name, since: now))
            known.insert(name)
        }
        let expired = retired.filter { now.timeIntervalSince($0.since) >= options.gracePeriod }
        manifest.retired = retired.filter { now.timeIntervalSince($0.since) < options.gracePeriod }

        let files = written.filter { named.contains($0.key) }.sorted { $0.key < $1.key }
        try OutputFile.write(files.map { (folder.appendingPathComponent($0.key).path, $0.value) })
        let previousSecond = Self.modificationSecond(manifestPath)
        try OutputFile.write(manifest.data, to: manifestPath)
        Self.advanceModificationSecond(manifestPath, past: previousSecond)
        // Only files named as a publisher names its own, even when a manifest edited by hand
        // retires others; plain files, never the store (`OutputFile.removeFiles`).
        let expiredNames = Set(expired.map(\.name))
        let deleted = OutputFile.removeFiles(
            in: folder.path, where: { expiredNames.contains($0) && PublishedFileName.isPublished($0) }, storePath: storePath)
        removeStaleTemporaries()
        return PublishReport(
            outcome: .segment, generation: manifest.generation, head: manifest.head,
            filesWritten: Set(files.map(\.key) + snapshotWritten + [PublishedManifest.fileName]).sorted(),
            filesDeleted: deleted.sorted(), filesInFolder: countFiles())
    }

    /// The whole second of `path`'s modification time, if it exists.
    private static func modificationSecond(_ path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return OutputFile.modificationSecond(status)
    }

    /// Gives the new manifest a modification time in a later second than the one it replaced.
    /// HTTP's Last-Modified counts whole seconds (and nginx's ETag is made of it and the size):
    /// a manifest published in the same second as the one a client last fetched answered that
    /// client's conditional request with 304, and the client stayed behind, "up to date",
    /// until a publish in a later second. (Files other than the manifest are named by their
    /// content and never change.)
    private static func advanceModificationSecond(_ path: String, past previous: Int?) {
        guard let previous, let current = modificationSecond(path), current <= previous else { return }
        var times = [
            timespec(tv_sec: previous + 1, tv_nsec: 0), timespec(tv_sec: previous + 1, tv_nsec: 0),
        ]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// Files the segment document `data` under its name, in `written`.
    private func store(_ data: Data, from: Int, to: Int, into written: inout [String: Data]) -> PublishedManifest.Segment {
        let digest = SHA256.hexDigest(of: data)
        let name = PublishedFileName.segment(from: from, to: to, sha256: digest)
        written[name] = data
        return .init(from: from, to: to, file: .init(name: name, size: data.count, sha256: digest))
    }

    private func content(of segment: PublishedManifest.Segment, written: [String: Data]) throws -> PublishedSegment {
        let data = try written[segment.file.name] ?? readFile(segment.file)
        return try PublishedSegment.parse(data, source: segment.file.name, kinds: kinds)
    }

    /// Version-1 pages of the whole store, records ordered by kind then key, then one page of
    /// tombstones.
    private func writeSnapshot(
        _ db: Database, generation: String, sequence: Int, tombstones: [RecordKind: Set<ExactKey>],
        into written: inout [String: Data]
    ) throws -> [PublishedManifest.File] {
        // Streamed: records are read from one cursor per kind and each page is written to disk
        // (under its content's name, renamed into place) as soon as it is full, so a snapshot
        // holds one page in memory, not the store. A page no manifest names yet is a stray
        // until the manifest is replaced; a failed publish leaves it to the grace period.
        var present: [RecordKind: Set<ExactKey>] = [:]
        var files: [PublishedManifest.File] = []
        let size = max(1, options.snapshotPageSize)
        func add(_ data: Data, _ label: String) throws {
            let digest = SHA256.hexDigest(of: data)
            let name = PublishedFileName.snapshotPage(sequence: sequence, label: label, sha256: digest)
            try OutputFile.write(data, to: folder.appendingPathComponent(name).path)
            files.append(.init(name: name, size: data.count, sha256: digest))
        }
        var page: [(RecordKind, JSONValue)] = []
        page.reserveCapacity(min(size, 1 << 16))
        // Bytes as well as records: a page of large images would be larger than a client may fetch.
        var pageBytes = 0
        func flush() throws {
            var members = [JSONMember("version", .integer(1))]
            for kind in kinds {
                members.append(JSONMember(kind.plural, .array(page.filter { $0.0 == kind }.map(\.1))))
            }
            try add(Data((JSONWriter(pretty: false).string(.object(members)) + "\n").utf8), String(files.count + 1))
            page.removeAll(keepingCapacity: true)
            pageBytes = 0
        }
        func take(_ kind: RecordKind, _ value: JSONValue) throws {
            // Only the tombstones' keys are looked for: a snapshot of millions of records holds
            // no set of them.
            if let tombstoned = tombstones[kind], !tombstoned.isEmpty, let key = PublishedSegment.key(of: value, kind: kind),
                tombstoned.contains(ExactKey(key))
            {
                present[kind, default: []].insert(ExactKey(key))
            }
            let bytes = value.estimatedSize
            if !page.isEmpty, pageBytes + bytes > options.snapshotPageBytes { try flush() }
            page.append((kind, value))
            pageBytes += bytes
            if page.count == size { try flush() }
        }
        for handler in handlers {
            try handler.forEachFeedValue(db, includingData: true) { try take(handler.kind, $0) }
        }
        if !page.isEmpty { try flush() }
        var remaining: [RecordKind: Set<ExactKey>] = [:]
        for (kind, keys) in tombstones { remaining[kind] = keys.subtracting(present[kind] ?? []) }
        var members = [JSONMember("version", .integer(1))]
        members += PublishedSegment.recordMembers([:], kinds: kinds)
        members.append(JSONMember("deleted", PublishedSegment.tombstones(remaining, kinds: kinds)))
        try add(Data((JSONWriter(pretty: false).string(.object(members)) + "\n").utf8), "deleted")
        _ = generation
        return files
    }

    /// The first 16 hex digits of the SHA-256 of change-log transaction `transaction`'s entry
    /// (its commit time and changes); nil when the log has no such entry.
    static func digest(ofTransaction transaction: Int64, in db: Database) throws -> String? {
        try db.query("SELECT committed_at, changes FROM change_log WHERE tx = ?", [.integer(transaction)]) { row in
            String(SHA256.hexDigest(of: Array((row.text(0) + "\n" + row.text(1)).utf8)).prefix(16))
        }.first
    }

    /// The record's value now, in the feed's shape; nil when it is gone (a tombstone).
    private func currentValue(_ db: Database, kind: RecordKind, key: String) throws -> JSONValue? {
        try handler(of: kind).feedValue(of: key, in: db)
    }

    /// The handler of a kind the change log names.
    private func handler(of kind: RecordKind) throws -> any RecordKindHandler {
        guard let handler = handlers.first(where: { $0.kind == kind }) else {
            // A kind the log names that this store no longer registers: leaving it out would let
            // clients drift from the source without a word.
            throw PublishError(
                path: manifestPath, reason: "records of the kind '\(kind)' changed, and the store does not register it")
        }
        return handler
    }

    // MARK: Folder

    /// The folder's manifest; nil only when there is none (one that cannot be read is an error,
    /// not a reason to start a new generation over it).
    private func readPreviousManifest() throws -> PublishedManifest? {
        var info = stat()
        if lstat(manifestPath, &info) != 0, errno == ENOENT { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: manifestPath))
        } catch {
            throw PublishError(path: manifestPath, reason: "cannot read: \(FeedLoader.reason(error))")
        }
        return try PublishedManifest.parse(data, source: manifestPath)
    }

    /// A file the manifest names, checked against the size and SHA-256 the manifest gives: a
    /// file changed by hand is not merged into a new segment or snapshot (clients would get it
    /// under a digest that vouches for it).
    private func readFile(_ file: PublishedManifest.File) throws -> Data {
        let path = folder.appendingPathComponent(file.name).path
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PublishError(
                path: path, reason: "a file the manifest names is missing; publish into an empty folder to start again")
        }
        guard data.count == file.size, SHA256.hexDigest(of: data) == file.sha256 else {
            throw PublishError(
                path: path,
                reason: "its size or SHA-256 is not the one the manifest gives (changed since it was published); "
                    + "publish into an empty folder to start again")
        }
        return data
    }

    /// The published files in the folder (named as a publisher names them), the manifest excluded.
    private func ownFiles() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter(isOwnPlainFile).sorted()
    }

    /// Whether `name` is a plain file (not a folder, not a link) named as a publisher names its
    /// files, and not the store.
    private func isOwnPlainFile(_ name: String) -> Bool {
        guard PublishedFileName.isPublished(name) else { return false }
        let path = folder.appendingPathComponent(name).path
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return false }
        if let storePath, OutputFile.isStore(path, storePath: storePath) { return false }
        return true
    }

    private func countFiles() -> Int { ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).count }

    /// Temporary files of a publish killed before its renames, once older than the grace period.
    private func removeStaleTemporaries() {
        // Files' modification times are the system clock's: so is the time compared with them.
        OutputFile.removeStaleTemporaries(
            in: folder.path, of: PublishedFileName.isPublishedOrManifest, olderThan: options.gracePeriod, now: Date(),
            storePath: storePath)
    }
}

/// A publish that could not be done; the folder still serves its previous state.
public struct PublishError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The folder or file the publish failed on.
    public let path: String
    /// Why, in words.
    public let reason: String

    public var description: String { "\(path): \(reason)" }
}
