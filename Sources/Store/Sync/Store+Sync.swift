import Foundation

extension Store {
    /// Reconciles the store with a feed (<doc:FeedFormat>) from a file or an http(s) URL.
    ///
    /// Guarantees:
    /// - every page is read before anything is written; then, inside one write transaction,
    ///   each record is read, checked and applied in feed order (read and checked on a thread of
    ///   the sync's own while the writer applies those before it, a few hundred at most), so
    ///   memory stays near the feed's own size however many records it holds;
    /// - any problem in the feed throws `FeedValidationError` listing them all, and the
    ///   transaction is rolled back: the store is unchanged;
    /// - every record is decided inside that transaction (after the download), so a local edit
    ///   committed meanwhile is seen; the sync is all or nothing;
    /// - images without inline data are downloaded afterwards, outside that transaction, one
    ///   download per URL however many ask; a failed image is reported in the result (and
    ///   retried next sync), it never rolls back the records;
    /// - when every page of the last sync answers 304 to its conditional request, the sync ends
    ///   as `.upToDate` without parsing; with `options.force`, a policy other than the last
    ///   sync's from this source, or other registered record kinds than it applied (another
    ///   program on this store, an app update that adds a kind), every page is fetched
    ///   unconditionally and reconciled (a published feed: from its snapshot);
    /// - with `options.dryRun`, the same report is computed and nothing is written;
    /// - every sync but a dry run is recorded in the history, failures included (but one that
    ///   failed waiting for another process's write lock past the busy timeout: its entry
    ///   would wait as long again, for the same lock); the entry of a
    ///   sync that applied its records is committed in the same transaction as they are, so it
    ///   exists if and only if they were applied (and is completed once the images are
    ///   downloaded). A failed sync adds its history row and changes nothing else (but a
    ///   refused stale manifest, which also marks the source's cursor suspect:
    ///   ``ManifestError/cursorMarkedSuspect``);
    /// - cancelling the task that awaits it stops it: before its records are committed, it
    ///   throws `CancellationError` and leaves the store exactly as it was (no history row
    ///   either); while images download (the records committed), the downloads stop and the
    ///   images not downloaded are reported as failed ("cancelled"), to be tried again next sync.
    public func sync(from source: FeedSource, options: SyncOptions = SyncOptions()) async throws -> SyncReport {
        let clock = configuration.clock
        let startedAt = clock.now()
        do {
            var report = try await performSync(source, options: options, startedAt: startedAt)
            report.imageFailures.sort { $0.url < $1.url }
            return report
        } catch {
            // A cancelled sync is not recorded: the store stays exactly as it was.
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            // A sync that failed waiting for another process's write lock adds no history row:
            // writing it would wait for that lock again, a whole busy timeout more (3 s became
            // 6), and most likely fail the same way.
            if !options.dryRun, !Self.isWriteLockTimeout(error) {
                let entry = SyncHistoryEntry(
                    source: source.key, startedAt: startedAt, finishedAt: clock.now(),
                    policy: options.policy, outcome: .failed, error: String(describing: error))
                _ = try? await write { try SyncStateTable(db: $0).appendHistory(entry) }
            }
            throw error
        }
    }

    /// The sources the store keeps sync state for, by key. Each sync from a new key (a feed
    /// downloaded to a new temporary path each time, say) starts one, with a hash of every
    /// record it received: `forgetSyncSource(_:)` removes those no longer synced from.
    public func syncSources() async throws -> [SyncSourceSummary] {
        try await read { try SyncStateTable(db: $0).sources() }
    }

    /// Forgets the sync state of `source` (a published folder stands for its manifest): its
    /// pages' validators, its cursor, and the hashes of the records received from it. The
    /// records themselves and the history stay. The next sync from it is a first sync: every
    /// page fetched, and, three-way, no record as last received to tell which side changed.
    /// Returns false if the store had none.
    ///
    /// A signed URL also forgets the state an older version kept under the URL with its
    /// signing parameters (`sources list` prints such keys), which syncs no longer use.
    @discardableResult
    public func forgetSyncSource(_ source: FeedSource) async throws -> Bool {
        let source = source.resolvingPublishedFolder
        var legacy: String?
        if case .remote(let url) = source, let key = url.withoutUserInfo, key != source.key { legacy = key }
        let keys = [source.key] + (legacy.map { [$0] } ?? [])
        return try await write { db in
            let table = SyncStateTable(db: db)
            var forgot = false
            for key in keys where try table.forgetSource(key) { forgot = true }
            return forgot
        }
    }

    /// The most recent syncs first. The history keeps the last 10,000 syncs
    /// (`SyncHistoryEntry.reportJSON` says what a stored report lists).
    public func syncHistory(limit: Int = 50) async throws -> [SyncHistoryEntry] {
        try await read { try SyncStateTable(db: $0).history(limit: limit) }
    }

    private func performSync(_ source: FeedSource, options: SyncOptions, startedAt: Date) async throws -> SyncReport {
        // A published folder is read through its manifest.
        let source = source.resolvingPublishedFolder
        let key = source.key
        let state = try await read { try SyncStateTable(db: $0).state(for: key) }
        let kinds = RecordKinds.handlers(registering: configuration.recordTypes)
        let fullSyncReason = Self.fullSyncReason(options: options, last: state, kinds: kinds)
        let validators = fullSyncReason != nil ? [] : state?.pages ?? []
        let loader = FeedLoader(fetcher: fetcher, options: options)
        // Only syncs that would make the very same requests share a fetch: same source, validators,
        // token and limits (a sync without the token must not receive a feed fetched with it). The
        // token by its SHA-256: a 64-bit record hash of two tokens can be made to collide, and
        // one sync would then receive a feed fetched with another's token. The whole URL too
        // (by its SHA-256, it may hold a signature): two signings of one URL share a key, and
        // one may have expired.
        let coalescingKey =
            ([
                key, "url " + SHA256.hexDigest(of: Array(source.url.absoluteString.utf8)),
                options.bearerToken.map { "token " + SHA256.hexDigest(of: Array($0.utf8)) } ?? "no token",
                String(options.maximumBytes),
                String(options.maximumPages),
                String(describing: options.timeout),
            ] + validators.map { [$0.url, $0.etag ?? "", $0.lastModified ?? ""].joined(separator: "\u{0}") }).joined(
                separator: "\n")
        let fetched = try await fetchCoalescer.load(coalescingKey) { try await loader.load(source, validators: validators) }

        let status: SyncReport.Status = options.dryRun ? .dryRun : .applied
        if !fetched.notModified, fetched.pages.count == 1, fetched.pages[0].isManifest {
            return try await performManifestSync(
                source, manifest: fetched.pages[0], validators: fetched.validators,
                fullSyncReason: fullSyncReason, options: options, startedAt: startedAt)
        }
        if fetched.notModified {
            let report = SyncReport(status: options.dryRun ? .dryRun : .upToDate, source: key, policy: options.policy)
            if !options.dryRun {
                let now = configuration.clock.now()
                let entry = SyncHistoryEntry(
                    source: key, startedAt: startedAt, finishedAt: now, policy: options.policy,
                    outcome: .upToDate, report: report)
                try await write { db in
                    let state = SyncStateTable(db: db)
                    _ = try state.saveSource(key, pages: nil, policy: nil, syncedAt: now)
                    try state.appendHistory(entry)
                }
            }
            return report
        }

        // The await above is over: anything may have changed. Everything is decided now, inside
        // the write transaction, as the pages are read record by record.
        let budget = configuration.imageCacheBudget
        let clock = configuration.clock
        let now = clock.now()
        let newValidators = fetched.validators
        let policy = options.policy
        let dryRun = options.dryRun
        let pages = fetched.pages
        var (report, downloads, records, historyID): (SyncReport, [FeedImage], Int, Int64)
        do {
            let walFiles = walFiles
            (report, downloads, records, historyID) = try await write { db in
                var reconciler = try Reconciler(
                    db: db, source: key, validators: newValidators, policy: policy,
                    imageBudget: budget, now: now, status: status, kinds: kinds)
                // The pages are read, checked and decoded on the pipeline's reader thread while
                // this one applies the records.
                let recordCount = try FeedPipeline.run(into: &reconciler) { sink in
                    var validator = FeedValidator(kinds: kinds)
                    for page in pages {
                        try validator.add(file: page.file, source: page.name, pageURL: page.url, into: &sink)
                        for problem in page.problems {
                            validator.report(source: problem.source, path: problem.path, message: problem.message)
                        }
                    }
                    // Throws when the feed had any problem: the transaction, and whatever the
                    // reconciler applied before the problem was found, is rolled back.
                    try validator.finish()
                    return validator.recordCount
                }
                try reconciler.finish()
                // Before it commits: still the file the store opened (see `StoreFile.checkStill`).
                try StoreFile.checkStill(walFiles)
                if dryRun {
                    throw DryRunRollback(
                        report: reconciler.report, downloads: reconciler.imagesToDownload, records: recordCount)
                }
                let report = reconciler.report
                let historyID = try Self.recordApplied(
                    report, state: SyncStateTable(db: db), source: key, startedAt: startedAt, finishedAt: clock.now(),
                    policy: policy, now: now, imagesPending: !reconciler.imagesToDownload.isEmpty)
                return (report, reconciler.imagesToDownload, recordCount, historyID)
            }
        } catch let rollback as DryRunRollback {
            (report, downloads, records, historyID) = (rollback.report, rollback.downloads, rollback.records, 0)
        }
        return try await finishApplied(
            report, downloads: downloads, records: records, historyID: historyID, dryRun: dryRun, source: key,
            validators: newValidators, policy: policy, startedAt: startedAt, now: now, options: options)
    }

    private static func isWriteLockTimeout(_ error: any Error) -> Bool {
        if case .writeLockTimeout = error as? StoreError { return true }
        return false
    }

    /// Removes the temporary folders of the downloads under way, for a process about to end
    /// without unwinding (see `SpoolFolder.removeAll`).
    package static func removeSpoolFolders() { SpoolFolder.removeAll() }

    /// Why this sync must read and reconcile the whole feed, with no 304 to end it and no cursor
    /// to continue from; nil if it may continue where the last one ended.
    /// - a full sync asked for (`SyncOptions.force`);
    /// - a policy other than the last sync's: every record must be reconciled again;
    /// - a kind the last sync did not apply (the app after storectl synced its store, or after
    ///   an update that registers a new kind): the last sync skipped that kind's records, yet
    ///   its cursor and validators moved past them.
    static func fullSyncReason(options: SyncOptions, last: SourceState?, kinds: [any RecordKindHandler]) -> String? {
        if options.force { return "a full sync was asked for" }
        // No policy: the source has no applied sync yet, so there is nothing to continue.
        guard let last, let policy = last.policy else { return nil }
        if policy != options.policy { return "the policy differs from the last sync's (\(policy.rawValue))" }
        guard let theirs = last.kinds else {
            // A sync before that record (migration 0014) applied at least the built-in kinds,
            // which every program registers: a program with no other kind continues from it.
            // (A full sync there re-applied the whole feed under the policy: prefer-remote
            // overwrote local edits and keep-existing brought back local deletions, on the
            // first sync after an upgrade; the upgrade review.)
            if kinds.allSatisfy({ RecordKind.allCases.contains($0.kind) }) { return nil }
            return "the last sync predates the record of the kinds a sync applies (migration 0014)"
        }
        // Fewer kinds than the last sync continue from its cursor (the records of the others are
        // skipped, and this sync records its own kinds); any kind it did not apply needs the
        // whole feed. So storectl and an app taking turns cost the app a full sync, not both.
        let applied = Set(theirs.split(separator: ",").map(String.init))
        if let missing = kinds.map(\.kind.rawValue).sorted().first(where: { !applied.contains($0) }) {
            return "the last sync did not apply the record kind '\(missing)' (it applied \(theirs))"
        }
        return nil
    }

    /// Inside a sync's write transaction, once its records are applied: forgets the source's
    /// validators if an image failed, or is still to be downloaded (so the next sync fetches the
    /// feed again, no 304, and retries it: `finishApplied` remembers them once every image is
    /// stored, and a process killed or a store closed before that leaves them forgotten), and
    /// appends the history row, committed with the records (it exists if and only if they do).
    /// Returns the row's id.
    static func recordApplied(
        _ report: SyncReport, state: SyncStateTable, source: String, startedAt: Date, finishedAt: Date,
        policy: SyncPolicy, now: Date, imagesPending: Bool
    ) throws -> Int64 {
        if report.images.failed > 0 || imagesPending { _ = try state.saveSource(source, pages: [], policy: nil, syncedAt: now) }
        return try state.appendHistory(
            SyncHistoryEntry(
                source: source, startedAt: startedAt, finishedAt: finishedAt, policy: policy,
                outcome: report.images.failed > 0 ? .appliedWithImageFailures : .applied, report: report))
    }

    /// After a sync's transaction (committed, or rolled back for a dry run): reports progress,
    /// downloads the images the feed named without data, and completes the history row with
    /// what became of them.
    ///
    /// `validators`: the pages' validators, which the records' transaction forgot while images
    /// were still to be downloaded; remembered here once every image is stored.
    /// `cursor`: for a sync from a manifest, the cursor it reached and the one it started at.
    /// While images are to be downloaded the cursor stays where it started (the records'
    /// transaction leaves it there); it moves to the one reached once every image is stored
    /// (unless another sync moved it meanwhile). If an image fails, or the process dies first,
    /// the next sync reads those files again and retries the image, as a version-1 feed's
    /// forgotten validators make it fetch every page again.
    func finishApplied(
        _ applied: SyncReport, downloads: [FeedImage], records: Int, historyID: Int64, dryRun: Bool, source key: String,
        validators: [PageValidators]?, policy: SyncPolicy, startedAt: Date, now: Date, options: SyncOptions,
        cursor: (applied: SyncCursor, previous: SyncCursor?)? = nil
    ) async throws -> SyncReport {
        var report = applied
        options.progress?(.validated(records: records))
        options.progress?(.reconciled(records: records))
        if dryRun {
            report.images.downloaded = downloads.count
            return report
        }
        guard !downloads.isEmpty else { return report }
        let downloaded = await downloadImages(downloads, into: &report, options: options)
        report.imageFailures.sort { $0.url < $1.url }
        let entry = SyncHistoryEntry(
            source: key, startedAt: startedAt, finishedAt: configuration.clock.now(), policy: policy,
            outcome: report.images.failed > 0 ? .appliedWithImageFailures : .applied, report: report)
        let forget = report.images.failed > 0
        // The records are committed: the history must say what became of the images, and the
        // validators be forgotten if some failed (so the next sync fetches the feed again, no
        // 304, and retries them), even when the sync was cancelled during the downloads. So this
        // short write runs in a task of its own, which does not inherit the caller's cancellation.
        // If it fails (a full disk), the records and images stay applied: the report says so and
        // why, rather than the sync failing as if nothing had been written.
        do {
            try await self.completeApplied(
                historyID: historyID, entry: entry, source: key, validators: validators, forget: forget, cursor: cursor,
                downloaded: downloaded, now: now)
        } catch {
            report.unrecorded = String(describing: error)
        }
        return report
    }

    /// `finishApplied`'s write, in a task of its own (see there).
    private func completeApplied(
        historyID row: Int64, entry: SyncHistoryEntry, source key: String, validators: [PageValidators]?, forget: Bool,
        cursor: (applied: SyncCursor, previous: SyncCursor?)?, downloaded: [String], now: Date
    ) async throws {
        try await Task {
            try await self.write { db in
                let state = SyncStateTable(db: db)
                try state.completeHistory(row, with: entry)
                let sourceID = try state.saveSource(key, pages: forget ? [] : validators, policy: nil, syncedAt: now)
                if !forget, let cursor, try state.cursor(for: key) == cursor.previous {
                    try state.setCursor(cursor.applied, sourceID: sourceID)
                }
                // Each image downloaded for this source is received as the cache now holds it
                // (replacing what was received before: an image evicted and fetched again), so
                // that the source's tombstone deletes it while it stays so.
                let stream = try state.stream(sourceID: sourceID, kind: .image)
                var received = ReceivedHashBatch(db: db)
                for url in downloaded {
                    guard let image = try db.images(budget: .max, now: now).peek(url) else { continue }
                    try received.set(Reconciler.hash(image: image.data, contentType: image.contentType), stream: stream, key: url)
                }
                try received.flush()
            }
        }.value
    }

    /// Downloads `images`, a few at a time; each failure is reported. When the task is
    /// cancelled, the downloads stop and the images not downloaded are reported as "cancelled".
    /// Returns the urls downloaded (not those another download had cached meanwhile).
    @discardableResult
    func downloadImages(_ images: [FeedImage], into report: inout SyncReport, options: SyncOptions) async -> [String] {
        guard !images.isEmpty else { return [] }
        var downloaded: [String] = []
        let pipeline = imagePipeline
        let fetcher = fetcher
        // The pipeline caps each download at the budget too: a size failure then says which.
        let budget = max(configuration.imageCacheBudget, 0)
        var done = 0
        options.progress?(.images(done: 0, total: images.count))
        await withTaskGroup(of: (String, Result<ImagePipeline.Outcome, any Error>).self) { group in
            var pending = images[...]
            func startNext() {
                guard let image = pending.popFirst() else { return }
                group.addTask {
                    guard let location = image.location else {
                        return (image.url, .failure(FeedSourceError.invalid(image.url, reason: "not a URL")))
                    }
                    do {
                        try Task.checkCancellation()
                        let outcome = try await pipeline.load(
                            image.url, from: location, contentType: image.contentType, fetcher: fetcher,
                            maximumBytes: options.maximumImageBytes, timeout: options.timeout, within: image.folder)
                        return (image.url, .success(outcome))
                    } catch {
                        return (image.url, .failure(error))
                    }
                }
            }
            for _ in 0..<max(1, options.imageConcurrency) { startNext() }
            while let (url, result) = await group.next() {
                switch result {
                case .success(.downloaded):
                    report.images.downloaded += 1
                    downloaded.append(url)
                case .success(.alreadyCached): report.images.alreadyCached += 1
                case .failure(let error):
                    report.images.failed += 1
                    // The failure is listed under its url: the reason need not start with it again.
                    var reason = error is CancellationError ? "cancelled" : String(describing: error)
                    if budget < options.maximumImageBytes, SyncOptions.isSizeLimit(error) {
                        reason = "larger than the whole image cache budget of \(budget) bytes; not stored"
                    }
                    if reason.utf8.starts(with: (url + ": ").utf8) {
                        reason = String(decoding: reason.utf8.dropFirst(url.utf8.count + 2), as: UTF8.self)
                    }
                    report.imageFailures.append(.init(url: url, reason: reason))
                }
                done += 1
                options.progress?(.images(done: done, total: images.count))
                startNext()
            }
        }
        return downloaded
    }

    /// The HTTP fetcher built from the store's transport, clock and retry policy.
    var fetcher: HTTPFetcher {
        HTTPFetcher(
            transport: configuration.transport, clock: configuration.clock, policy: configuration.retryPolicy,
            random: configuration.random)
    }
}

/// Thrown inside the write transaction of a dry run so that it rolls back, carrying the report out.
struct DryRunRollback: Error {
    let report: SyncReport
    let downloads: [FeedImage]
    let records: Int
}
