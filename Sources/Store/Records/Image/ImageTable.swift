import Foundation

/// Cached image bytes inside a transaction: `try db.images.put(...)`.
///
/// The cache keeps at most `budget` bytes: storing evicts the least recently used entries
/// (by `lastAccessAt`, then url) until the total fits, in the same transaction. The total is
/// kept by triggers (migration 0016), so a put costs the same in a cache of any size.
public struct ImageTable {
    let db: Database
    let budget: Int
    let now: Date

    private static let infoColumns = "url, content_type, size, stored_at, last_access_at"

    private static func decodeInfo(_ row: Statement) throws -> CachedImageInfo {
        let url = row.text(0)
        return CachedImageInfo(
            url: url, contentType: row.optionalText(1),
            size: Int(try StoredValue.integer(row, 2, kind: .image, key: url, field: "size", within: sizes)),
            storedAt: try StoredValue.time(row, 3, kind: .image, key: url, field: "storedAt"),
            lastAccessAt: try StoredValue.time(row, 4, kind: .image, key: url, field: "lastAccessAt"))
    }

    /// An entry with its bytes, from `url, data, content_type, stored_at, last_access_at`.
    private static func decodeImage(_ row: Statement) throws -> CachedImage {
        let url = row.text(0)
        return CachedImage(
            url: url, data: row.data(1), contentType: row.optionalText(2),
            storedAt: try StoredValue.time(row, 3, kind: .image, key: url, field: "storedAt"),
            lastAccessAt: try StoredValue.time(row, 4, kind: .image, key: url, field: "lastAccessAt"))
    }

    /// The sizes an entry can have: SQLite stores at most 2^31 - 1 bytes in one value
    /// (SQLITE_MAX_LENGTH's ceiling), so sums of sizes stay far from overflowing.
    static let sizes: ClosedRange<Int64> = 0...2_147_483_647

    /// The condition a stored size meets, in SQL (text counts as 0 in SQLite's `sum`, and a
    /// size near 2^63 makes it fail with "integer overflow").
    private static let sizeIsValid = "(typeof(size) = 'integer' AND size BETWEEN 0 AND \(sizes.upperBound))"

    /// Every entry without its bytes, ordered by url.
    public func fetchAllInfo() throws -> [CachedImageInfo] {
        var infos: [CachedImageInfo] = []
        try fetchEachInfo { infos.append($0) }
        return infos
    }

    /// Every entry without its bytes, ordered by url, handed to `body` one at a time as a cursor
    /// steps: none is kept, so a cache of any number of entries is listed in bounded memory.
    /// Access times are not touched. An error `body` throws ends the walk and is rethrown; the
    /// task's cancellation is checked every few hundred rows (`CancellationError`).
    public func fetchEachInfo(_ body: (CachedImageInfo) throws -> Void) throws {
        try db.forEachRow("SELECT \(Self.infoColumns) FROM images ORDER BY url") { try body(Self.decodeInfo($0)) }
    }

    /// Every entry with its bytes, ordered by url.
    public func fetchAll() throws -> [CachedImage] {
        var images: [CachedImage] = []
        try fetchEach { images.append($0) }
        return images
    }

    /// Every entry with its bytes, ordered by url, handed to `body` one at a time as a cursor
    /// steps: none is kept, so at most one entry's bytes are held at a time. Access times are not
    /// touched. An error `body` throws ends the walk and is rethrown; the task's cancellation
    /// is checked every few hundred rows (`CancellationError`).
    public func fetchEach(_ body: (CachedImage) throws -> Void) throws {
        try db.forEachRow("SELECT url, data, content_type, stored_at, last_access_at FROM images ORDER BY url") {
            try body(try Self.decodeImage($0))
        }
    }

    /// `fetchEach`: export and publish walk images in url order, which is `fetchAll`'s.
    func forEachRecord(_ body: (CachedImage) throws -> Void) throws { try fetchEach(body) }

    /// The entry for `url` without touching its access time.
    public func peek(_ url: String) throws -> CachedImage? {
        try db.query(
            "SELECT url, data, content_type, stored_at, last_access_at FROM images WHERE url = ?", [.text(url)], Self.decodeImage
        ).first
    }

    /// Whether the cache holds `url` (its access time untouched).
    public func contains(_ url: String) throws -> Bool {
        try !db.query("SELECT 1 FROM images WHERE url = ?", [.text(url)]) { _ in () }.isEmpty
    }

    /// The entry for `url`, marking it used now (so eviction keeps it longest). The access time
    /// is bookkeeping: observers are not told of it.
    public func get(_ url: String) throws -> CachedImage? {
        try db.withoutObservation {
            try db.execute(
                "UPDATE images SET last_access_at = ? WHERE url = ?", [.integer(Timestamp.milliseconds(now)), .text(url)])
        }
        return try peek(url)
    }

    /// Stores bytes for `url`, replacing any earlier entry, then evicts to the budget. Returns
    /// the urls evicted. Throws `StoreError.invalidRecord` if the bytes alone exceed the budget,
    /// or if a feed could not carry `url` back as it is (see `keyProblem(_:)`).
    @discardableResult
    public func put(_ url: String, data: Data, contentType: String?) throws -> [String] {
        if let problem = Self.keyProblem(url) {
            throw StoreError.invalidRecord(kind: .image, key: url, field: "url", reason: problem)
        }
        return try replace(url, data: data, contentType: contentType)
    }

    /// `put` for a feed's image, whose url the feed's validator already read (a local feed's
    /// relative names included).
    @discardableResult
    func replace(_ url: String, data: Data, contentType: String?) throws -> [String] {
        try store(url, data: data, contentType: contentType, replacing: true) ?? []
    }

    /// Why `url` cannot key an image stored by hand, or nil: it must be a key a feed can carry
    /// back as it is. That is an http(s) URL with a host, or a relative path inside a folder
    /// (what a local feed's image file names are kept as: no leading `/`, no `.` or `..`, not
    /// `//host`), either written as `URL(string:)` writes it: a feed reads every image url
    /// through it, so `https://e.com/a b` came back from an export as `https://e.com/a%20b`
    /// (another key), and a `javascript:` or `ftp:` key, or `/etc/passwd`, made every export and
    /// published folder of the store unreadable to clients, its tombstone too. (A relative name
    /// read from a folder served over http(s) resolves against the page: prefer absolute URLs.)
    public static func keyProblem(_ url: String) -> String? {
        guard !url.isEmpty, let parsed = URL(string: url) else { return "is not a URL" }
        if let scheme = parsed.scheme?.lowercased() {
            guard scheme == "http" || scheme == "https" else {
                return "has the scheme '\(scheme):'; a feed carries only http(s) URLs (and names relative to a local feed)"
            }
            guard let host = parsed.host, !host.isEmpty else { return "has no host" }
        } else if url.hasPrefix("/")
            || url.split(separator: "/", omittingEmptySubsequences: false).contains(where: {
                $0 == "." || $0 == ".." || $0.isEmpty
            })
        {
            return "is not an http(s) URL, nor a relative path inside a folder (no leading /, no . or .., no empty part)"
        }
        let written = parsed.relativeString
        if written != url { return "is written \(written) in a feed; use that" }
        return nil
    }

    /// Stores bytes for `url` only if the cache does not already hold it: the actor-cache rule
    /// (`cache[url] = cache[url, default: image]`). Returns nil if an entry was already there.
    @discardableResult
    public func insertIfAbsent(_ url: String, data: Data, contentType: String?) throws -> [String]? {
        try store(url, data: data, contentType: contentType, replacing: false)
    }

    /// Deletes the entry; false if there was none.
    @discardableResult
    public func delete(_ url: String) throws -> Bool {
        try db.execute("DELETE FROM images WHERE url = ?", [.text(url)])
        guard db.changes == 1 else { return false }
        return true
    }

    /// Evicts least recently used entries until the total fits the budget; returns their urls.
    /// Counts every entry first (and puts the kept totals right if they were not).
    @discardableResult
    public func evictToBudget(keeping kept: String? = nil) throws -> [String] {
        let (count, bytes) = try counted()
        try keep(entries: count, bytes: bytes)
        return try evict(keeping: kept, total: bytes)
    }

    /// Evicts least recently used entries, never `kept`, until `total` (the cache's bytes) fits
    /// the budget; returns their urls. Reads the least recently used entries a few at a time,
    /// only as many as it evicts (it read every entry, then evicted: a full cache read all of
    /// them at each image stored).
    ///
    /// If every other entry together holds less than the excess, `total` was too high (raw SQL
    /// that replaced rows, see migration 0016): nothing is evicted on its word; the entries are
    /// counted, the kept totals put right, and eviction runs on the count.
    private func evict(keeping kept: String?, total: Int) throws -> [String] {
        guard total > budget else { return [] }
        var excess = total - budget
        var chosen: [String] = []
        var after: (access: SQLValue, url: String)?
        var limit = 8
        walk: while true {
            let page = try db.query(
                after == nil
                    ? "SELECT url, size, last_access_at FROM images ORDER BY last_access_at, url LIMIT ?"
                    : "SELECT url, size, last_access_at FROM images WHERE (last_access_at, url) > (?, ?) ORDER BY last_access_at, url LIMIT ?",
                (after.map { [$0.access, .text($0.url)] } ?? []) + [.integer(Int64(limit))]
            ) { row in
                let url = row.text(0)
                // A size the store could not have written fails only if eviction reaches it.
                let size = Result {
                    Int(try StoredValue.integer(row, 1, kind: .image, key: url, field: "size", within: Self.sizes))
                }
                return (url, size, row.value(2))
            }
            for (url, size, access) in page {
                after = (access, url)
                if url == kept { continue }
                chosen.append(url)
                excess -= try size.get()
                if excess <= 0 { break walk }
            }
            if page.count < limit { break }
            limit = min(limit * 4, 1024)
        }
        if excess > 0 {
            let (count, bytes) = try counted()
            try keep(entries: count, bytes: bytes)
            if bytes != total { return try evict(keeping: kept, total: bytes) }
        }
        for url in chosen { try delete(url) }
        return chosen
    }

    /// The cache's bytes as migration 0016's triggers keep them; counted (and kept) when the
    /// row is missing or holds what no count could be.
    private func keptBytes() throws -> Int {
        let kept = try db.query("SELECT entries, bytes FROM image_cache_totals WHERE id = 0") { ($0.value(0), $0.value(1)) }
        if case .integer(let entries)? = kept.first?.0, case .integer(let bytes)? = kept.first?.1, entries >= 0, bytes >= 0 {
            return Int(bytes)
        }
        let (count, bytes) = try counted()
        try keep(entries: count, bytes: bytes)
        return bytes
    }

    /// Sets the kept totals, unless they already say so (a write then dirties no page).
    private func keep(entries: Int, bytes: Int) throws {
        try db.execute(
            """
            INSERT INTO image_cache_totals (id, entries, bytes) VALUES (0, ?, ?)
            ON CONFLICT (id) DO UPDATE SET entries = excluded.entries, bytes = excluded.bytes
            WHERE entries IS NOT excluded.entries OR bytes IS NOT excluded.bytes
            """, [.integer(Int64(entries)), .integer(Int64(bytes))])
    }

    /// The cache's totals and budget.
    public func stats() throws -> ImageCacheStats {
        let (count, total) = try counted()
        return ImageCacheStats(count: count, totalBytes: total, budgetBytes: budget)
    }

    /// The number of entries and their bytes, in one pass over the index that holds the sizes
    /// (for `stats` and `evictToBudget`; a put reads the kept totals instead). A stored size the
    /// store could not have written (changed around it) is `StoreError.invalidRecord` naming the
    /// entry, not a wrong total or a trap; the aggregates tell one cheaply: SQLite's `sum` turns
    /// real when a value is not an integer (text counts as 0) and fails on overflow, and `min`
    /// and `max` show a negative or too large size, or text and blobs, which sort after every
    /// number.
    private func counted() throws -> (count: Int, bytes: Int) {
        let totals: (count: Int, sum: SQLValue, min: SQLValue, max: SQLValue)
        do {
            totals = try db.query("SELECT count(*), sum(size), min(size), max(size) FROM images") {
                ($0.int(0), $0.value(1), $0.value(2), $0.value(3))
            }[0]
        } catch let error as SQLiteError {
            try nameInvalidSize()
            throw error
        }
        switch (totals.sum, totals.min, totals.max) {
        case (.null, _, _): return (totals.count, 0)
        case (.integer(let sum), .integer(let min), .integer(let max)) where Self.sizes.contains(min) && Self.sizes.contains(max):
            return (totals.count, Int(sum))
        default:
            try nameInvalidSize()
            throw StoreError.invalidRecord(kind: .image, key: "", field: "size", reason: "a stored size is not a size")
        }
    }

    /// Throws `StoreError.invalidRecord` for the first entry whose stored size the store could
    /// not have written.
    private func nameInvalidSize() throws {
        _ = try db.query("SELECT url, size FROM images WHERE NOT \(Self.sizeIsValid) LIMIT 1") { row in
            try StoredValue.integer(row, 1, kind: .image, key: row.text(0), field: "size", within: Self.sizes)
        }
    }

    private func store(_ url: String, data: Data, contentType: String?, replacing: Bool) throws -> [String]? {
        if url.isEmpty {
            throw StoreError.invalidRecord(kind: .image, key: url, field: "url", reason: "must not be empty")
        }
        // Before the budget: a budget may exceed what SQLite stores in one value, and its
        // error (SQLITE_TOOBIG, with the statement) names neither the image nor the limit.
        // The limit holds for the whole row too: the url and content type take their share.
        let room = db.maximumValueBytes - url.utf8.count - (contentType?.utf8.count ?? 0) - 64
        if data.count > room {
            throw StoreError.invalidRecord(
                kind: .image, key: url, field: "data",
                reason: "\(data.count) bytes exceed the \(room) bytes SQLite stores in one row for it")
        }
        if data.count > budget {
            throw StoreError.invalidRecord(
                kind: .image, key: url, field: "data",
                reason: "\(data.count) bytes exceed the cache budget of \(budget) bytes")
        }
        let time = Timestamp.milliseconds(now)
        // An upsert, never REPLACE: the kept totals see its update (see migration 0016).
        try db.execute(
            """
            INSERT INTO images (url, data, content_type, size, stored_at, last_access_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (url) \(replacing ? Self.replaceEntry : "DO NOTHING")
            """,
            [
                .text(url), .blob(data), contentType.map(SQLValue.text) ?? .null, .integer(Int64(data.count)),
                .integer(time), .integer(time),
            ])
        if !replacing && db.changes == 0 { return nil }
        return try evict(keeping: url, total: try keptBytes())
    }

    private static let replaceEntry = """
        DO UPDATE SET data = excluded.data, content_type = excluded.content_type,
            size = excluded.size, stored_at = excluded.stored_at, last_access_at = excluded.last_access_at
        """
}

extension Database {
    /// The image cache table, on this connection, with the default budget and the current time.
    public var images: ImageTable { ImageTable(db: self, budget: Store.Configuration.defaultImageCacheBudget, now: Date()) }

    /// The image cache table with an explicit budget and clock reading.
    func images(budget: Int, now: Date) -> ImageTable { ImageTable(db: self, budget: budget, now: now) }
}
