import Foundation

extension Store {
    /// Frameworks, read and written asynchronously.
    public var frameworks: FrameworkStore { FrameworkStore(store: self) }
    /// Orders with their items.
    public var orders: OrderStore { OrderStore(store: self) }
    /// Calendar events and their dates.
    public var events: EventStore { EventStore(store: self) }
    /// The image cache.
    public var images: ImageStore { ImageStore(store: self) }
}

/// `store.frameworks`: each method is one read or one write transaction.
public struct FrameworkStore: Sendable {
    let store: Store

    /// Every framework, ordered by id.
    public func fetchAll() async throws -> [Framework] {
        try await store.fetchAll(FrameworkTable.fetchAllQuery, columns: FrameworkTable.fetchAllColumns) {
            FrameworkTable.decode($0)
        }
    }
    /// The framework with this id, or nil.
    public func find(_ id: String) async throws -> Framework? { try await store.read { try $0.frameworks.find(id) } }
    /// The number of frameworks.
    public func count() async throws -> Int { try await store.read { try $0.frameworks.count() } }
    /// Inserts a new framework; `StoreError.recordExists` if its id is taken.
    public func insert(_ framework: Framework) async throws {
        try await store.write(rerunnable: true) { try $0.frameworks.insert(framework) }
    }
    /// Replaces an existing framework; `StoreError.recordNotFound` if there is none.
    public func update(_ framework: Framework) async throws {
        try await store.write(rerunnable: true) { try $0.frameworks.update(framework) }
    }
    /// Inserts many frameworks in one transaction: all or none.
    public func insert(_ frameworks: [Framework]) async throws {
        try await store.write(rerunnable: true) { db in for framework in frameworks { try db.frameworks.insert(framework) } }
    }
    /// Deletes the framework with this id; false if there was none.
    @discardableResult
    public func delete(_ id: String) async throws -> Bool {
        try await store.write(rerunnable: true) { try $0.frameworks.delete(id) }
    }
}

/// `store.orders`: each method is one read or one write transaction.
public struct OrderStore: Sendable {
    let store: Store

    /// Every order with its items, ordered by id.
    public func fetchAll() async throws -> [Order] { try await store.read { try $0.orders.fetchAll() } }
    /// The order with this id and its items, or nil.
    public func find(_ id: String) async throws -> Order? { try await store.read { try $0.orders.find(id) } }
    /// The number of orders.
    public func count() async throws -> Int { try await store.read { try $0.orders.count() } }
    /// The exact total of an order; nil if there is no such order.
    public func total(_ id: String) async throws -> Money? { try await store.read { try $0.orders.total(id) } }
    /// Inserts a new order with its items; `StoreError.recordExists` if its id is taken.
    public func insert(_ order: Order) async throws { try await store.write(rerunnable: true) { try $0.orders.insert(order) } }
    /// Replaces an order and all its items; `StoreError.recordNotFound` if there is none.
    public func update(_ order: Order) async throws { try await store.write(rerunnable: true) { try $0.orders.update(order) } }
    /// Deletes the order and its items; false if there was none.
    @discardableResult
    public func delete(_ id: String) async throws -> Bool { try await store.write(rerunnable: true) { try $0.orders.delete(id) } }
}

/// `store.events`: each method is one read or one write transaction.
public struct EventStore: Sendable {
    let store: Store

    /// Every event, ordered by date then id.
    public func fetchAll() async throws -> [Event] {
        try await store.fetchAll(EventTable.fetchAllQuery, columns: EventTable.fetchAllColumns) { try EventTable.decode($0) }
    }
    /// The event with this id, or nil.
    public func find(_ id: String) async throws -> Event? { try await store.read { try $0.events.find(id) } }
    /// The number of events.
    public func count() async throws -> Int { try await store.read { try $0.events.count() } }
    /// The events of one day, ordered by id.
    public func on(_ date: CalendarDate) async throws -> [Event] { try await store.read { try $0.events.on(date) } }
    /// The events of one month, ordered by date then id.
    public func inMonth(_ month: YearMonth) async throws -> [Event] { try await store.read { try $0.events.inMonth(month) } }
    /// The days of `month` that have events, with their counts.
    public func dates(in month: YearMonth) async throws -> [DateCount] { try await store.read { try $0.events.dates(in: month) } }
    /// Inserts a new event; `StoreError.recordExists` if its id is taken.
    public func insert(_ event: Event) async throws { try await store.write(rerunnable: true) { try $0.events.insert(event) } }
    /// Replaces an existing event; `StoreError.recordNotFound` if there is none.
    public func update(_ event: Event) async throws { try await store.write(rerunnable: true) { try $0.events.update(event) } }
    /// Deletes the event with this id; false if there was none.
    @discardableResult
    public func delete(_ id: String) async throws -> Bool { try await store.write(rerunnable: true) { try $0.events.delete(id) } }
}

/// `store.images`: the image cache with its byte budget and LRU eviction.
public struct ImageStore: Sendable {
    let store: Store

    private var budget: Int { store.configuration.imageCacheBudget }
    private var clock: StoreClock { store.configuration.clock }

    /// The bytes for `url`, marking the entry used now; nil if not cached. A write, since it
    /// records the access time that eviction orders by.
    public func get(_ url: String) async throws -> CachedImage? {
        let (budget, now) = (budget, clock.now())
        return try await store.write(rerunnable: true) { try $0.images(budget: budget, now: now).get(url) }
    }

    /// Stores (or replaces) the bytes for `url`, evicting least recently used entries beyond
    /// the budget; returns the evicted urls.
    @discardableResult
    public func put(_ url: String, data: Data, contentType: String? = nil) async throws -> [String] {
        let (budget, now) = (budget, clock.now())
        return try await store.write(rerunnable: true) {
            try $0.images(budget: budget, now: now).put(url, data: data, contentType: contentType)
        }
    }

    /// Every entry without its bytes.
    public func list() async throws -> [CachedImageInfo] {
        let (budget, now) = (budget, clock.now())
        return try await store.read { try $0.images(budget: budget, now: now).fetchAllInfo() }
    }

    /// Whether the cache holds `url` (its access time untouched).
    public func contains(_ url: String) async throws -> Bool {
        let (budget, now) = (budget, clock.now())
        return try await store.read { try $0.images(budget: budget, now: now).contains(url) }
    }

    /// Deletes the entry for `url`; false if there was none.
    @discardableResult
    public func delete(_ url: String) async throws -> Bool {
        let (budget, now) = (budget, clock.now())
        return try await store.write(rerunnable: true) { try $0.images(budget: budget, now: now).delete(url) }
    }

    /// Evicts least recently used entries until the total fits the budget; returns their urls.
    @discardableResult
    public func prune() async throws -> [String] {
        let (budget, now) = (budget, clock.now())
        return try await store.write(rerunnable: true) { try $0.images(budget: budget, now: now).evictToBudget() }
    }

    /// The image for `url`: from the cache if it holds it, else downloaded through the store's
    /// transport (``Store/Configuration/transport``, retrying as
    /// ``Store/Configuration/retryPolicy`` says) and cached, evicting least recently used
    /// entries beyond the budget.
    ///
    /// - Concurrent loads of one URL share one download, the first caller's, as it is: with
    ///   its `timeout` and its size cap (a later caller's own are not applied). The bytes are
    ///   inserted only if the cache still has no entry for `url` when the download returns.
    /// - `timeout` bounds each wait for bytes (for the response to start, then for the next
    ///   bytes of the body), retries included: no retry starts once `timeout` has passed since
    ///   the first attempt, and a later attempt waits only for the time left. A body that keeps
    ///   arriving a byte now and then is not stalled: the live transport bounds the whole
    ///   exchange at ten times the timeout it was given, so a load ends within ten times
    ///   `timeout`.
    /// - `maximumBytes` (32 MiB by default) caps the body, and so does the cache's budget
    ///   (``Store/Configuration/imageCacheBudget``), whichever is smaller: a larger
    ///   Content-Length is refused before the body is read, a body without one once that many
    ///   bytes arrived.
    /// - Only a whole image is stored: a 200 or 203 with a body whose Content-Type, if it has
    ///   one, is `image/*`, `application/octet-stream` or `binary/octet-stream`. Nothing is
    ///   cached for a failed load, so the next one tries again.
    /// - The image is returned even if it was evicted (or deleted) between its insert and the
    ///   read that follows it; one found cached but gone when read is downloaded again, once.
    /// - A cancelled load stops waiting at once; the download stops once every load waiting
    ///   for it was cancelled.
    ///
    /// - Throws: ``StoreError/invalidRecord(kind:key:field:reason:)``, before any request, for a
    ///   `url` that ``ImageStore/put(_:data:contentType:)`` refuses (see
    ///   ``ImageTable/keyProblem(_:)``), that is not an absolute http(s) URL or that has a user
    ///   name or password (the error names it without them), for `maximumBytes` below 1 and
    ///   for a `timeout` of 0 or less. ``HTTPError`` when the download fails:
    ///   ``HTTPError/notAnImage(url:reason:)`` for a response that is not a whole image,
    ///   ``HTTPError/tooLarge(url:limit:)`` beyond the cap, ``HTTPError/status(url:code:)`` for
    ///   a 4xx (or a 5xx or 429 that retrying did not get past), ``HTTPError/gaveUp(_:attempts:timeout:)``
    ///   when retries of a transient failure (a connection failure, a timeout, a cut-short
    ///   body) stopped, and the other cases. `CancellationError` when cancelled; a
    ///   ``SQLiteError`` or ``StoreError`` from the cache's read or write.
    public func load(_ url: String, maximumBytes: Int = 32 * 1024 * 1024, timeout: Duration = .seconds(30)) async throws
        -> CachedImage
    {
        // A user name or password would be kept in the key, and listed; errors name it without.
        if let location = URL(string: url), location.user != nil || location.password != nil {
            throw StoreError.invalidRecord(
                kind: .image, key: location.redacted, field: "url",
                reason: "has a user name or password; the cache keeps and lists its keys, so an image URL carries neither")
        }
        // The keys `put` refuses: an export or sync would bring them back as other keys.
        if let problem = ImageTable.keyProblem(url) {
            throw StoreError.invalidRecord(kind: .image, key: url, field: "url", reason: problem)
        }
        guard let location = URL(string: url), let scheme = location.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            throw StoreError.invalidRecord(kind: .image, key: url, field: "url", reason: "must be an absolute http(s) URL")
        }
        guard maximumBytes >= 1 else {
            throw StoreError.invalidRecord(
                kind: .image, key: url, field: "maximumBytes", reason: "must be at least 1 byte; got \(maximumBytes)")
        }
        guard timeout > .zero else {
            throw StoreError.invalidRecord(
                kind: .image, key: url, field: "timeout", reason: "must be longer than 0 s; got \(HTTPError.seconds(timeout))")
        }
        // Once more only if the cache held the url when asked and no longer did when read (an
        // eviction or a delete in between): downloaded now, the bytes are at hand.
        for _ in 1...2 {
            let outcome = try await store.imagePipeline.load(
                url, from: location, fetcher: store.fetcher, maximumBytes: maximumBytes, timeout: timeout)
            if let image = try await get(url) { return image }
            if case .downloaded(let data, let contentType) = outcome {
                // Stored, then evicted by other loads' inserts (or deleted, or pruned) before
                // this read: still the image this load asked for.
                let now = clock.now()
                return CachedImage(url: url, data: data, contentType: contentType, storedAt: now, lastAccessAt: now)
            }
        }
        throw StoreError.recordNotFound(kind: .image, key: url)
    }

    /// Downloads started by `load` and sync since the store was opened (one per URL, however
    /// many asked at once). For tests.
    var downloadCount: Int { get async { await store.imagePipeline.downloadCount } }

    /// The cache's totals and budget.
    public func stats() async throws -> ImageCacheStats {
        let (budget, now) = (budget, clock.now())
        return try await store.read { try $0.images(budget: budget, now: now).stats() }
    }
}
