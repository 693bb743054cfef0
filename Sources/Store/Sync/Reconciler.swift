import Foundation

/// Applies a feed to the store inside one write transaction, record by record, in the order
/// `FeedValidator` reads them (decoded on sync's reader thread, applied on the writer's:
/// `FeedPipeline`).
///
/// It runs after the feed was downloaded (after the `await`), and reads every local record
/// inside the transaction, so a local edit committed while the feed was downloading is seen
/// and respected. The validator hands it records only while the feed has no problem, and the
/// caller rolls the transaction back when validation fails in the end: the store never keeps
/// part of an invalid feed. The rules, per key (see README, "Sync policies"):
///
/// | local | keep-existing | prefer-remote | three-way |
/// |---|---|---|---|
/// | absent | insert | insert | insert (unless deleted locally since the last sync) |
/// | equal to feed | unchanged | unchanged | unchanged |
/// | differs | kept | updated | updated if unchanged locally since last sync, unchanged if only local changed, else kept (conflict) |
/// | tombstone | delete if unchanged since synced | delete | delete if unchanged since synced |
struct Reconciler {
    let db: Database
    let source: String
    /// The source's id in `sync_sources`, which `sync_records` rows refer to.
    let sourceID: Int64
    let policy: SyncPolicy
    let imageBudget: Int
    let now: Date
    private(set) var report: SyncReport
    /// Feed images without data that the cache does not hold: to download after the commit.
    private(set) var imagesToDownload: [FeedImage] = []
    private var state: SyncStateTable { SyncStateTable(db: db) }
    /// Whether the previous record already existed locally: the guess for the next one.
    private var previousExisted = false
    /// Received hashes to write, batched; flushed before any read of them and by `finish()`.
    private var received: ReceivedHashBatch
    /// The stream id (`sync_streams`) of each kind met so far from this source, and the last one
    /// asked for: records come in runs of one kind.
    private var streams: [RecordKind: Int64] = [:]
    private var lastStream: (kind: RecordKind, id: Int64)?
    /// Whether every key this sync meets is noted (`trackSeenKeys`), for `tombstoneUnseen`.
    private var tracksSeenKeys = false

    /// Records the source, its pages' validators and the policy (inside the sync's write
    /// transaction, so a failed sync leaves no trace of them), ready for the first record.
    init(
        db: Database, source: String, validators: [PageValidators]?, policy: SyncPolicy, imageBudget: Int, now: Date,
        status: SyncReport.Status, kinds: [any RecordKindHandler] = RecordKinds.builtIn
    ) throws {
        self.db = db
        self.source = source
        self.policy = policy
        self.imageBudget = imageBudget
        self.now = now
        self.report = SyncReport(status: status, source: source, policy: policy)
        sourceID = try SyncStateTable(db: db).saveSource(
            source, pages: validators, policy: policy, kinds: SyncStateTable.kindsKey(kinds), syncedAt: now)
        received = ReceivedHashBatch(db: db)
        // Every kind is reported, those the feed did not hold with zero counts.
        for handler in kinds { report[handler.kind] = report[handler.kind] }
    }

    /// Writes what is still buffered and evicts the image cache down to its budget, so the
    /// budget holds after the sync whatever the cache held before; call once, after the last
    /// record.
    mutating func finish() throws {
        try received.flush()
        try db.images(budget: imageBudget, now: now).evictToBudget()
    }

    static func hash(image data: Data, contentType: String?) -> UInt64 { RecordHash.of(image: data, contentType: contentType) }

    // MARK: Records

    /// Applies a record of a table's kind by the policy's rules (see the type's table); `remote`
    /// is its `Table.hash(of:)`, computed on the reader thread.
    mutating func reconcile<Table: SyncedTable>(_ record: Table.Record, hash remote: UInt64, in table: Table) throws {
        let kind = Table.kind
        let id = Table.key(of: record)
        let stream = try stream(kind)
        if tracksSeenKeys { try noteSeen(stream: stream, key: id) }
        if policy != .threeWay {
            // Keep-existing and prefer-remote need no local hash: a new record is inserted by
            // one statement, and an existing one is compared inside SQLite. Which statement to
            // try first is guessed from the previous record: feeds come in runs (a first sync
            // inserts everything, a later one finds most records), so the guess saves a
            // statement per record, and a wrong one costs only that statement.
            var local: LocalComparison?
            if previousExisted {
                local = try table.compare(record, stream: stream)
            }
            if local == nil {
                if try table.insertIfAbsent(record) {
                    previousExisted = false
                    try received.set(remote, stream: stream, key: id)
                    report[kind].inserted += 1
                    return
                }
                local = try table.compare(record, stream: stream)
            }
            previousExisted = true
            if local?.equal == true {
                report[kind].unchanged += 1
                // Usually already received as it is: then there is nothing to write.
                if local?.received != remote { try received.set(remote, stream: stream, key: id) }
            } else if policy == .keepExisting {
                report[kind].kept += 1
            } else {
                try table.update(record)
                try received.set(remote, stream: stream, key: id)
                report[kind].updated += 1
            }
            return
        }
        // Three-way compares the local record with the hash received last time. Equal is
        // decided by the table's exact comparison first (also whether the record exists), not
        // by hash: a 64-bit record hash of two different records can be made to match, and the
        // feed's change would be dropped.
        guard let comparison = try table.compare(record, stream: stream) else {
            // A record received before and deleted locally since stays deleted unless the feed
            // changed it meanwhile (then it is a conflict, kept deleted).
            if let receivedBefore = try receivedHash(kind, id) {
                if receivedBefore == remote { report[kind].unchanged += 1 } else { conflict(kind, id) }
                return
            }
            try table.insert(record)
            try received.set(remote, stream: stream, key: id)
            report[kind].inserted += 1
            return
        }
        if comparison.equal {
            report[kind].unchanged += 1
            try received.set(remote, stream: stream, key: id)
            return
        }
        // Found by `compare` just now, in this transaction.
        guard let local = try table.find(id) else { return }
        let current = Table.hash(of: local)
        let receivedBefore = try receivedHash(kind, id)
        if receivedBefore == current {
            // Not changed locally since the last sync: take the remote change.
            try table.update(record)
            try received.set(remote, stream: stream, key: id)
            report[kind].updated += 1
        } else if receivedBefore == remote {
            // Only the local side changed: nothing new from the feed.
            report[kind].unchanged += 1
        } else {
            conflict(kind, id)
        }
    }

    /// Applies a tombstone of a table's kind: deleted unless changed locally since synced.
    mutating func tombstone<Table: SyncedTable>(_ id: String, in table: Table) throws {
        let kind = Table.kind
        if tracksSeenKeys { try noteSeen(stream: try stream(kind), key: id) }
        guard let local = try table.find(id) else {
            try forget(kind, id)
            return
        }
        let receivedBefore = try receivedHash(kind, id)
        if policy == .preferRemote || receivedBefore == Table.hash(of: local) {
            _ = try table.delete(id)
            try forget(kind, id)
            report[kind].deleted += 1
        } else {
            report[kind].kept += 1
        }
    }

    /// The id of this source's stream of `kind`, made on first use (inside the transaction).
    private mutating func stream(_ kind: RecordKind) throws -> Int64 {
        if let lastStream, lastStream.kind == kind { return lastStream.id }
        let id: Int64
        if let known = streams[kind] {
            id = known
        } else {
            id = try state.stream(sourceID: sourceID, kind: kind)
            streams[kind] = id
        }
        lastStream = (kind, id)
        return id
    }

    /// The hash last received for `key`, with the buffered writes flushed first.
    private mutating func receivedHash(_ kind: RecordKind, _ key: String) throws -> UInt64? {
        try received.flush()
        return try state.receivedHash(stream: try stream(kind), key: key)
    }

    private mutating func forget(_ kind: RecordKind, _ key: String) throws {
        try received.flush()
        try state.forget(stream: try stream(kind), key: key)
    }

    private mutating func conflict(_ kind: RecordKind, _ id: String) {
        report[kind].kept += 1
        report.conflicts.append(Change(kind: kind, key: id, operation: .update))
    }

    // MARK: Images

    /// Applies an image: stored when it has data, else downloaded after the commit.
    mutating func reconcileImage(_ image: FeedImage) throws {
        if tracksSeenKeys { try noteSeen(stream: try stream(.image), key: image.url) }
        let table = db.images(budget: imageBudget, now: now)
        let existing = try table.peek(image.url)
        guard let data = image.data else {
            // One the cache already holds (put by hand, say) is not this source's to delete; one
            // downloaded for it is (`Store.finishApplied` records it as received).
            if existing != nil { report.images.alreadyCached += 1 } else { imagesToDownload.append(image) }
            return
        }
        if data.count > imageBudget {
            // Larger than the whole cache: never stored (it would evict everything and still not
            // fit), reported like a failed download; the records are applied all the same.
            report.images.failed += 1
            report.imageFailures.append(
                .init(
                    url: image.url,
                    reason: String(
                        describing: StoreError.invalidRecord(
                            kind: .image, key: image.url, field: "data",
                            reason: "\(data.count) bytes exceed the cache budget of \(imageBudget) bytes"))))
            return
        }
        let remote = Self.hash(image: data, contentType: image.contentType)
        if let existing {
            // The same bytes and type, compared exactly (a feed controls an image's bytes, and
            // two with one 64-bit hash are easy to make).
            let sameType =
                switch (existing.contentType, image.contentType) {
                case (nil, nil): true
                case (let stored?, let sent?): stored.utf8.elementsEqual(sent.utf8)
                default: false
                }
            if (sameType && existing.data == data) || policy != .preferRemote {
                report.images.alreadyCached += 1
                return
            }
        }
        try table.replace(image.url, data: data, contentType: image.contentType)
        try received.set(remote, stream: try stream(.image), key: image.url)
        report.images.stored += 1
    }

    /// Applies an image's tombstone.
    mutating func tombstoneImage(_ url: String) throws {
        if tracksSeenKeys { try noteSeen(stream: try stream(.image), key: url) }
        let table = db.images(budget: imageBudget, now: now)
        guard let existing = try table.peek(url) else {
            try forget(.image, url)
            return
        }
        let current = Self.hash(image: existing.data, contentType: existing.contentType)
        let receivedBefore = try receivedHash(.image, url)
        if policy == .preferRemote || receivedBefore == current {
            try table.delete(url)
            try forget(.image, url)
            report.images.deleted += 1
        }
    }

    // MARK: A snapshot as the whole truth

    /// From now on, notes every key the sync meets (records and tombstones, of every kind), in
    /// a temporary table of the writer's connection (on disk past SQLite's cache, so a feed of
    /// any size), for `tombstoneUnseen`. Created inside the sync's transaction: rolled back
    /// with it.
    mutating func trackSeenKeys() throws {
        try db.executeScript(
            """
            CREATE TEMP TABLE IF NOT EXISTS sync_seen (stream INTEGER NOT NULL, key TEXT NOT NULL, PRIMARY KEY (stream, key))
                WITHOUT ROWID;
            DELETE FROM temp.sync_seen;
            """)
        tracksSeenKeys = true
    }

    private func noteSeen(stream: Int64, key: String) throws {
        let insert = try db.cachedStatement(literal: "INSERT OR IGNORE INTO temp.sync_seen (stream, key) VALUES (?, ?)")
        try insert.bind(stream, at: 1)
        try insert.bind(key, at: 2)
        defer { insert.reset() }
        _ = try insert.step()
    }

    /// After a full sync from a published feed (its snapshot and the segments after it: the
    /// publisher's whole state), applies a tombstone to each key received from this source
    /// before that the sync did not meet: the publisher deleted it. A new generation (a folder
    /// deleted and published again, another store taking it over, a change log pruned past the
    /// last publish) carries no tombstones of the old one, so a client kept such records for
    /// good. The policy decides as for any tombstone (under keep-existing, a record changed
    /// locally since is kept). Kinds no handler here registers are left alone (another
    /// program's, which this sync did not read).
    mutating func tombstoneUnseen(_ handlers: [any RecordKindHandler]) throws {
        guard tracksSeenKeys else { return }
        try received.flush()
        let unseen = try db.query(
            """
            SELECT s.kind, r.key FROM sync_records AS r JOIN sync_streams AS s ON s.id = r.stream
            WHERE s.source_id = ? AND NOT EXISTS (SELECT 1 FROM temp.sync_seen AS t WHERE t.stream = r.stream AND t.key = r.key)
            ORDER BY s.kind, r.key
            """, [.integer(sourceID)]
        ) { (kind: RecordKind(rawValue: $0.text(0)), key: $0.text(1)) }
        tracksSeenKeys = false
        for (kind, key) in unseen {
            guard let handler = handlers.first(where: { $0.kind == kind }) else { continue }
            try handler.tombstone(key, with: &self)
        }
        try db.executeScript("DROP TABLE temp.sync_seen")
    }
}
