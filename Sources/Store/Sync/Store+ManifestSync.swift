import Foundation

extension Store {
    /// A sync from a published feed's manifest (version 2), called by `sync(from:options:)`
    /// once the source turned out to be a manifest: the segments after this store's cursor, or
    /// the snapshot (and the segments after it) when the cursor cannot be continued, each
    /// verified, then all applied in one write transaction with the cursor, like a version-1 feed.
    func performManifestSync(
        _ source: FeedSource, manifest page: FetchedFeed.Page, validators: [PageValidators]?, fullSyncReason reason: String?,
        options: SyncOptions, startedAt: Date
    ) async throws -> SyncReport {
        let key = source.key
        // The cap on a file holds for the files this sync reads (below), not for every one named.
        let manifest = try PublishedManifest.parse(try Data(contentsOf: page.file), source: page.name)
        let (cursor, suspect) = try await read { db in
            let state = SyncStateTable(db: db)
            return (try state.cursor(for: key), try state.cursorIsSuspect(for: key))
        }
        let clock = configuration.clock

        // An older manifest than the one this store last synced: a cache that served a stale
        // copy, or a folder restored from a backup. A full sync from it rolled the store back to
        // a state the publisher had left (deleted records back, updates undone), silently, and
        // so did any reason for a full sync (another policy, another program's kinds): refused
        // unless asked for (`force`). The cursor is marked: once the head passes it again, its
        // sequence numbers may name other changes than those this store applied (a restored
        // folder republishes them), so that sync reads the snapshot.
        if let cursor, cursor.generation == manifest.generation, cursor.sequence > manifest.head, !options.force {
            if !options.dryRun { try await write { try SyncStateTable(db: $0).markCursorSuspect(for: key) } }
            throw ManifestError(
                source: page.name, path: "head",
                message:
                    "is \(manifest.head), behind this store's cursor (\(cursor.sequence)) in the same generation: "
                    + "an older copy of manifest.json (a cache: serve it with Cache-Control: no-cache), or a folder "
                    + "restored from a backup; no record was applied"
                    + (options.dryRun
                        ? "" : ", and the cursor is marked suspect, so the next sync from this source reads the snapshot")
                    + " (sync with --force to read this manifest's snapshot now)",
                cursorMarkedSuspect: !options.dryRun)
        }

        // Which files: the segments after the cursor, or the snapshot and what follows it.
        let oldestBase = manifest.segments.first.map { $0.from - 1 } ?? manifest.head
        var fullSyncReason: String?
        if let reason {
            fullSyncReason = reason
        } else if let cursor {
            if cursor.generation != manifest.generation {
                fullSyncReason = "the feed was republished as another generation"
            } else if suspect {
                fullSyncReason =
                    "an older manifest was served since the last sync, so the sequence numbers after the cursor "
                    + "(\(cursor.sequence)) may name other changes (a folder restored from a backup)"
            } else if cursor.sequence < oldestBase, manifest.segments.isEmpty {
                // A publish whose segment was over the publisher's bound lists none (FeedFormat,
                // "Publishing"): said as it is, not as a segment from `head + 1`.
                fullSyncReason =
                    "the store's cursor (\(cursor.sequence)) is older than the snapshot (at \(manifest.snapshotSequence)), "
                    + "and the manifest lists no segment"
            } else if cursor.sequence < oldestBase {
                fullSyncReason =
                    "the store's cursor (\(cursor.sequence)) is older than the oldest retained segment (from \(oldestBase + 1))"
            }
        } else {
            fullSyncReason = "no cursor for this source yet"
        }
        let start = fullSyncReason == nil ? cursor!.sequence : manifest.snapshotSequence
        var files = fullSyncReason == nil ? [] : manifest.snapshotFiles.map { ($0, PublishedManifest.Segment?.none) }
        files += manifest.segments.filter { $0.to > start }.map { ($0.file, $0) }
        // Only the files this sync reads must be within its cap (each is fetched whole): a
        // segment ending at the cursor or at the snapshot is never fetched, and refusing the
        // manifest over one (a folder published before segments were bounded, or with a larger
        // bound than this client's cap) refused a full sync that only needed the snapshot.
        for (file, segment) in files where file.size > options.maximumBytes {
            let path =
                segment.flatMap { segment in manifest.segments.firstIndex { $0.from == segment.from } }
                .map { "segments[\($0)].size" }
                ?? "snapshot.files[\(manifest.snapshotFiles.firstIndex { $0.name == file.name } ?? 0)].size"
            // The sync's own limit, not the manifest's fault: said as the other size limits say
            // it (it read "is out of range 0...2048", as if the manifest were broken).
            let limit = options.maximumBytes
            throw ManifestError(
                source: page.name, path: path,
                message: "\(file.size) bytes is larger than the limit of \(limit) byte\(limit == 1 ? "" : "s") per file")
        }
        var details = PublishedSyncDetails(
            generation: manifest.generation,
            fromSequence: cursor?.generation == manifest.generation ? cursor?.sequence : nil,
            toSequence: manifest.head, fullSyncReason: fullSyncReason)

        let dryRun = options.dryRun
        // The cursor at the head: nothing to read, or nothing left to apply.
        func upToDate() async throws -> SyncReport {
            let report = SyncReport(status: dryRun ? .dryRun : .upToDate, source: key, policy: options.policy)
            if !dryRun {
                let now = clock.now()
                let entry = SyncHistoryEntry(
                    source: key, startedAt: startedAt, finishedAt: now, policy: options.policy,
                    outcome: .upToDate, report: report)
                try await write { db in
                    let state = SyncStateTable(db: db)
                    _ = try state.saveSource(key, pages: validators, policy: nil, syncedAt: now)
                    try state.appendHistory(entry)
                }
            }
            var withDetails = report
            withDetails.published = details
            return withDetails
        }
        if files.isEmpty { return try await upToDate() }

        // Download and verify everything before the transaction: each file on disk (the
        // published one, or its download in `spool`), read again in chunks when applied.
        let loader = PublishedFileLoader(fetcher: fetcher, options: options, source: source, manifestURL: page.url)
        let spool = try SpoolFolder()
        defer { withExtendedLifetime(spool) {} }
        var loaded: [(PublishedFileLoader.Loaded, PublishedManifest.Segment?)] = []
        for (file, segment) in files {
            try Task.checkCancellation()
            let body = try await loader.load(file, spool: spool)
            if let segment { try Self.checkSegment(body, matches: segment, generation: manifest.generation) }
            loaded.append((body, segment))
            details.filesFetched += 1
            details.bytesFetched += body.size
        }

        let budget = configuration.imageCacheBudget
        let now = clock.now()
        let policy = options.policy
        let status: SyncReport.Status = dryRun ? .dryRun : .applied
        let newCursor = SyncCursor(generation: manifest.generation, sequence: manifest.head)
        let expectedCursor = cursor
        let fullSync = fullSyncReason != nil
        let (pages, fetchedDetails) = (loaded.map { (file: $0.0, isSegment: $0.1 != nil) }, details)
        let kinds = RecordKinds.handlers(registering: configuration.recordTypes)
        // Read before the write transaction: a key a later segment holds again is applied once,
        // in its last state.
        let superseded = try SupersededKeys(pages: pages, kinds: kinds)
        var (report, downloads, records, historyID): (SyncReport, [FeedImage], Int, Int64)
        do {
            let walFiles = walFiles
            (report, downloads, records, historyID) = try await write { db in
                let state = SyncStateTable(db: db)
                // Another sync of this source may have committed during the downloads: the
                // segments chosen for the old cursor might not continue the new one.
                if !fullSync, case let current = try state.cursor(for: key), current != expectedCursor {
                    // Two syncs of one source at once (one process shares the manifest's fetch,
                    // not the rest): when the other one reached this very head, this one has
                    // nothing left to do. It failed with "sync again", and a failed history row.
                    if current == newCursor { throw AlreadyAtHead() }
                    throw ManifestError(
                        source: key, path: "", message: "the store was synced from this source meanwhile; sync again")
                }
                var reconciler = try Reconciler(
                    db: db, source: key, validators: validators, policy: policy,
                    imageBudget: budget, now: now, status: status, kinds: kinds)
                if fullSync { try reconciler.trackSeenKeys() }
                // The snapshot's pages are one feed (a key at most once); each segment is one of
                // its own. A key that a later segment holds again is applied once, in its last
                // state (`SupersededKeys`): the sync applies the change from the cursor to the
                // head, each key reconciled against the store as it was before.
                // They are read on the pipeline's reader thread while this one applies them.
                let recordCount = try FeedPipeline.run(into: &reconciler) { sink in
                    var recordCount = 0
                    var validator = FeedValidator(kinds: kinds)
                    validator.nextRefusal = Self.snapshotNextRefusal
                    sink.superseded = superseded
                    for (file, isSegment) in pages {
                        if isSegment {
                            try validator.finish()
                            recordCount += validator.recordCount
                            validator = FeedValidator(kinds: kinds)
                            validator.acceptsSegments = true
                            validator.nextRefusal = Self.segmentNextRefusal
                            sink.group += 1
                        }
                        try validator.add(
                            descriptor: file.descriptorAtStart(), source: file.name, pageURL: file.url, into: &sink)
                    }
                    try validator.finish()
                    return recordCount + validator.recordCount
                }
                try reconciler.tombstoneUnseen(kinds)
                try reconciler.finish()
                // Before it commits: still the file the store opened (see `StoreFile.checkStill`).
                try StoreFile.checkStill(walFiles)
                var report = reconciler.report
                report.published = fetchedDetails
                if dryRun {
                    throw DryRunRollback(report: report, downloads: reconciler.imagesToDownload, records: recordCount)
                }
                // While images are to be downloaded, the cursor stays (see `finishApplied`).
                let imagesPending = !reconciler.imagesToDownload.isEmpty
                try state.setCursor(
                    imagesPending ? (fullSync ? nil : expectedCursor) : newCursor, sourceID: reconciler.sourceID)
                let historyID = try Self.recordApplied(
                    report, state: state, source: key, startedAt: startedAt, finishedAt: clock.now(), policy: policy,
                    now: now, imagesPending: imagesPending)
                return (report, reconciler.imagesToDownload, recordCount, historyID)
            }
        } catch let rollback as DryRunRollback {
            (report, downloads, records, historyID) = (rollback.report, rollback.downloads, rollback.records, 0)
        } catch is AlreadyAtHead {
            return try await upToDate()
        }
        return try await finishApplied(
            report, downloads: downloads, records: records, historyID: historyID, dryRun: dryRun, source: key,
            validators: validators, policy: policy, startedAt: startedAt, now: now, options: options,
            // After a full sync, no cursor: the next sync reads the snapshot again (an image only
            // the snapshot names would not be retried from the cursor the sync started at).
            cursor: (newCursor, fullSync ? nil : expectedCursor))
    }

    /// Why a published file's `next` is refused: it was not followed, and the records of the
    /// page it named were silently missing.
    static let snapshotNextRefusal = "a snapshot page has no next: the manifest lists every file of the snapshot"
    static let segmentNextRefusal = "a segment has no next: the manifest lists every segment"

    /// Thrown out of a manifest sync's write when another sync of the source has applied the
    /// same head meanwhile (rolled back: nothing of this one is kept).
    private struct AlreadyAtHead: Error {}

    /// A segment's own `version`, `generation`, `from` and `to` must be the manifest's: a
    /// segment of another generation, or one that does not continue the cursor, is refused.
    private static func checkSegment(
        _ file: PublishedFileLoader.Loaded, matches segment: PublishedManifest.Segment,
        generation: String
    ) throws {
        func fail(_ path: String, _ message: String) -> ManifestError {
            ManifestError(source: file.name, path: path, message: message)
        }
        // Each member read from the file in chunks (it stops at the member it looks for).
        func member(_ name: String) throws -> JSONValue? {
            JSONParser.topLevelMember(name, in: JSONChunkReader(descriptor: try file.descriptorAtStart()))
        }
        guard case .number("2")? = try member("version") else {
            throw fail("version", "must be 2 in a segment")
        }
        guard case .string(generation)? = try member("generation") else {
            throw fail("generation", "is not the manifest's generation '\(generation)'")
        }
        guard case .number(String(segment.from))? = try member("from") else {
            throw fail("from", "is not \(segment.from), as the manifest says")
        }
        guard case .number(String(segment.to))? = try member("to") else {
            throw fail("to", "is not \(segment.to), as the manifest says")
        }
    }
}
