import Foundation

/// Sync's own tables, on one connection: validators per source, the hash of each record as last
/// received, and the history.
struct SyncStateTable {
    let db: Database

    /// What the last sync of `source` remembered: each page's validators, its policy and its kinds.
    func state(for source: String) throws -> SourceState? {
        guard
            let (id, policy, kinds) = try db.query(
                "SELECT id, policy, kinds FROM sync_sources WHERE source = ?", [.text(source)],
                {
                    ($0.int64(0), $0.optionalText(1).flatMap(SyncPolicy.init(rawValue:)), $0.optionalText(2))
                }
            ).first
        else { return nil }
        let pages = try db.query(
            "SELECT url, etag, last_modified FROM sync_pages WHERE source_id = ? ORDER BY number", [.integer(id)]
        ) { PageValidators(url: $0.text(0), etag: $0.optionalText(1), lastModified: $0.optionalText(2)) }
        return SourceState(pages: pages, policy: policy, kinds: kinds)
    }

    /// Every source with sync state, by key, with the records received from each.
    func sources() throws -> [SyncSourceSummary] {
        try db.query(
            """
            SELECT s.source, s.last_synced_at, s.policy,
                   (SELECT count(*) FROM sync_records AS r JOIN sync_streams AS t ON r.stream = t.id WHERE t.source_id = s.id)
            FROM sync_sources AS s ORDER BY s.source
            """
        ) {
            SyncSourceSummary(
                source: $0.text(0), lastSyncedAt: $0.optionalText(1).flatMap(Timestamp.parse),
                policy: $0.optionalText(2).flatMap(SyncPolicy.init(rawValue:)), receivedRecords: Int($0.int64(3)))
        }
    }

    /// Forgets everything kept for `source` (its validators, cursor, pages, and what was received
    /// from it: `sync_streams` cascades, and its trigger removes the records' hashes); its
    /// history stays. False if it had nothing.
    func forgetSource(_ source: String) throws -> Bool {
        try db.execute("DELETE FROM sync_sources WHERE source = ?", [.text(source)])
        return db.changes > 0
    }

    /// How the kinds a sync applies are recorded: their names, sorted, comma-separated.
    static func kindsKey(_ handlers: [any RecordKindHandler]) -> String {
        handlers.map(\.kind.rawValue).sorted().joined(separator: ",")
    }

    /// Records a sync of `source`: its time, its policy and kinds (when given: a sync that
    /// applies records) and its pages' validators (when given: they replace the remembered ones;
    /// empty forgets them). Returns the source's id, which `sync_records` rows refer to.
    @discardableResult
    func saveSource(
        _ source: String, pages: [PageValidators]?, policy: SyncPolicy?, kinds: String? = nil, syncedAt: Date
    ) throws -> Int64 {
        let rows = try db.query(
            """
            INSERT INTO sync_sources (source, policy, kinds, last_synced_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (source) DO UPDATE SET policy = coalesce(excluded.policy, policy),
                kinds = coalesce(excluded.kinds, kinds), last_synced_at = excluded.last_synced_at
            RETURNING id
            """,
            [
                .text(source), policy.map { .text($0.rawValue) } ?? .null, kinds.map(SQLValue.text) ?? .null,
                .text(Timestamp.format(syncedAt)),
            ]
        ) { $0.int64(0) }
        // An upsert with RETURNING gives exactly one row, inserted or updated.
        let id = rows[0]
        if let pages {
            try db.execute("DELETE FROM sync_pages WHERE source_id = ?", [.integer(id)])
            for (index, page) in pages.enumerated() {
                try db.execute(
                    "INSERT INTO sync_pages (source_id, number, url, etag, last_modified) VALUES (?, ?, ?, ?, ?)",
                    [
                        .integer(id), .integer(Int64(index + 1)), .text(page.url),
                        page.etag.map(SQLValue.text) ?? .null, page.lastModified.map(SQLValue.text) ?? .null,
                    ])
            }
        }
        return id
    }

    /// The id of the stream of `kind` from the source with id `sourceID` (`sync_streams`), which
    /// `sync_records` rows refer to; made on first use.
    func stream(sourceID: Int64, kind: RecordKind) throws -> Int64 {
        let select = try db.cachedStatement(literal: "SELECT id FROM sync_streams WHERE source_id = ? AND kind = ?")
        try select.bind(sourceID, at: 1)
        try select.bind(kind.rawValue, at: 2)
        defer { select.reset() }
        if try select.step() { return select.int64(0) }
        try db.execute("INSERT INTO sync_streams (source_id, kind) VALUES (?, ?)", [.integer(sourceID), .text(kind.rawValue)])
        return db.lastInsertedRowID
    }

    /// The hash of `key` as last received in the stream with id `stream`, if it was.
    func receivedHash(stream: Int64, key: String) throws -> UInt64? {
        let statement = try db.cachedStatement(literal: "SELECT hash FROM sync_records WHERE stream = ? AND key = ?")
        try statement.bind(stream, at: 1)
        try statement.bind(key, at: 2)
        defer { statement.reset() }
        return try statement.step() ? UInt64(bitPattern: statement.int64(0)) : nil
    }

    func forget(stream: Int64, key: String) throws {
        try db.execute("DELETE FROM sync_records WHERE stream = ? AND key = ?", [.integer(stream), .text(key)])
    }

    /// Syncs the history keeps: each new entry removes those more than this many entries older
    /// (a sync every minute from cron keeps about a week). Without a bound the table grew by a
    /// row a sync, for ever (the growth review: 525,600 rows, 270 MB, for a year of minutes).
    static let retainedHistory: Int64 = 10_000

    /// Conflicts and image failures a stored report lists, each: a three-way sync reports its
    /// conflicts again on every run until they are resolved (5,000 of them made a 205 KB row a
    /// sync). The counts stay whole; the sync's own `SyncReport` lists everything.
    static let listedPerStoredReport = 100

    /// The report as the history stores it: compact JSON, its lists cut to
    /// `listedPerStoredReport`.
    static func storedJSON(_ report: SyncReport) -> String {
        var stored = report
        stored.conflicts = Array(stored.conflicts.prefix(listedPerStoredReport))
        stored.imageFailures = Array(stored.imageFailures.prefix(listedPerStoredReport))
        return JSONWriter(pretty: false).string(stored.jsonValue)
    }

    /// Adds `entry`, and removes the entries more than `retainedHistory` older; returns its row id.
    @discardableResult
    func appendHistory(_ entry: SyncHistoryEntry) throws -> Int64 {
        try db.execute(
            "INSERT INTO sync_history (source, started_at, finished_at, policy, outcome, report, error) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                .text(entry.source), .text(Timestamp.format(entry.startedAt)), .text(Timestamp.format(entry.finishedAt)),
                .text(entry.policy.rawValue), .text(entry.outcome.rawValue),
                entry.report.map { .text(Self.storedJSON($0)) } ?? .null,
                entry.error.map(SQLValue.text) ?? .null,
            ])
        let id = db.lastInsertedRowID
        // A range of the rowid: nothing to read but the rows removed.
        try db.execute("DELETE FROM sync_history WHERE id <= ?", [.integer(id - Self.retainedHistory)])
        return id
    }

    /// Completes the entry with row id `id` (added when the records were applied) once the
    /// images are downloaded: its finish time, outcome and report.
    func completeHistory(_ id: Int64, with entry: SyncHistoryEntry) throws {
        try db.execute(
            "UPDATE sync_history SET finished_at = ?, outcome = ?, report = ? WHERE id = ?",
            [
                .text(Timestamp.format(entry.finishedAt)), .text(entry.outcome.rawValue),
                entry.report.map { .text(Self.storedJSON($0)) } ?? .null, .integer(id),
            ])
    }

    func history(limit: Int) throws -> [SyncHistoryEntry] {
        try db.query(
            "SELECT source, started_at, finished_at, policy, outcome, report, error FROM sync_history ORDER BY id DESC LIMIT ?",
            [.integer(Int64(limit))]
        ) { row in
            SyncHistoryEntry(
                source: row.text(0), startedAt: Timestamp.parse(row.text(1)) ?? Date(timeIntervalSince1970: 0),
                finishedAt: Timestamp.parse(row.text(2)) ?? Date(timeIntervalSince1970: 0),
                policy: SyncPolicy(rawValue: row.text(3)) ?? .keepExisting,
                outcome: SyncHistoryEntry.Outcome(rawValue: row.text(4)) ?? .failed,
                reportJSON: row.optionalText(5), error: row.optionalText(6))
        }
    }
}

/// One sync as the history remembers it (`Store.syncHistory(limit:)`, `storectl history`):
/// every sync that was not a dry run, committed or failed, is one entry. Times are kept to the
/// millisecond.
public struct SyncHistoryEntry: Sendable, Equatable {
    /// How the sync ended. The raw value is what the history stores and storectl prints.
    public enum Outcome: String, Sendable, Codable {
        /// The feed was reconciled and committed, with every image it needed.
        case applied
        /// Nothing had changed (HTTP 304, or a published feed already at its head): nothing
        /// written but the history.
        case upToDate = "up-to-date"
        /// The sync failed and wrote nothing but this entry; `error` says why.
        case failed
        /// The records were committed, but some image downloads failed (retried next sync).
        case appliedWithImageFailures = "applied-with-image-failures"
    }

    /// The source's key (`FeedSource.key`): the absolute path, or the URL without credentials.
    public var source: String
    /// When the sync started, to the millisecond.
    public var startedAt: Date
    /// When it ended (committed, or failed), to the millisecond.
    public var finishedAt: Date
    /// The policy it ran with.
    public var policy: SyncPolicy
    /// How it ended.
    public var outcome: Outcome
    /// The report's counts as compact JSON, when the sync got that far. As the history stores
    /// it, its `conflicts` and `imageFailures` list at most the first 100 each (the counts stay
    /// whole); the history keeps the last 10,000 syncs.
    public var reportJSON: String?
    /// For a failed sync, the error as a person reads it (naming the file, record and field
    /// where there is one); nil otherwise.
    public var error: String?
    var report: SyncReport?

    init(
        source: String, startedAt: Date, finishedAt: Date, policy: SyncPolicy, outcome: Outcome,
        report: SyncReport? = nil, reportJSON: String? = nil, error: String? = nil
    ) {
        self.source = source
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.policy = policy
        self.outcome = outcome
        self.report = report
        self.reportJSON = reportJSON ?? report.map { JSONWriter(pretty: false).string($0.jsonValue) }
        self.error = error
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        (lhs.source, lhs.startedAt, lhs.finishedAt, lhs.policy, lhs.outcome) == (
            rhs.source, rhs.startedAt, rhs.finishedAt, rhs.policy, rhs.outcome
        )
            && lhs.reportJSON == rhs.reportJSON && lhs.error == rhs.error
    }

    package var jsonValue: JSONValue {
        var members = [
            JSONMember("source", .string(source)), JSONMember("startedAt", .string(Timestamp.format(startedAt))),
            JSONMember("finishedAt", .string(Timestamp.format(finishedAt))), JSONMember("policy", .string(policy.rawValue)),
            JSONMember("outcome", .string(outcome.rawValue)),
        ]
        if let reportJSON, let parsed = try? JSONParser.parse(Data(reportJSON.utf8), maximumValues: .max) {
            members.append(JSONMember("report", parsed))
        }
        if let error { members.append(JSONMember("error", .string(error))) }
        return .object(members)
    }
}
