import Foundation
import Testing

@testable import Store

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// Helpers of the sync behaviour tests. Every name is prefixed (or namespaced) so nothing
// collides with the other SyncTests helpers in this module.

/// The time every behaviour test's store reads: 2027-01-15 08:00:00 UTC. Sleeping never waits.
let behaviourNow = Date(timeIntervalSince1970: 1_800_000_000)

/// A temporary folder of one test (the shared `TemporaryDirectory`) with feed-writing helpers;
/// removed by `remove()` or when released.
struct BehaviourFolder: Sendable {
    private let directory: TemporaryDirectory
    var url: URL { directory.url }

    init() throws {
        directory = try TemporaryDirectory(prefix: "SyncBehaviour")
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// Writes `text` as `name` and returns it as a file feed source.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> FeedSource {
        try write(name, Data(text.utf8))
    }

    @discardableResult
    func write(_ name: String, _ data: Data) throws -> FeedSource {
        let file = self.file(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
        return .file(file.standardizedFileURL)
    }

    func remove() { directory.remove() }
}

/// A store configuration for tests: fixed clock that never sleeps, instant retries, the given
/// transport (the live one by default).
func behaviourConfiguration(transport: HTTPTransport = .live) -> Store.Configuration {
    var configuration = Store.Configuration()
    configuration.clock = .fixed(behaviourNow)
    configuration.transport = transport
    configuration.random = { 0 }
    configuration.retryPolicy = RetryPolicy(maximumAttempts: 4, baseDelay: .milliseconds(10), maximumDelay: .milliseconds(10))
    return configuration
}

/// Runs `body` with a store on a new SQLite file in a temporary folder; closes the store and
/// removes the folder afterwards.
func withBehaviourStore<T>(
    transport: HTTPTransport = .live,
    _ body: (Store, BehaviourFolder) async throws -> T
) async throws -> T {
    let folder = try BehaviourFolder()
    defer { folder.remove() }
    let store = try await Store.open(
        at: folder.file("store.sqlite").path, configuration: behaviourConfiguration(transport: transport))
    do {
        let result = try await body(store, folder)
        await store.close()
        return result
    } catch {
        await store.close()
        throw error
    }
}

/// Opens a second store in `folder` (another file), for round trips.
func openSecondStore(in folder: BehaviourFolder, name: String) async throws -> Store {
    try await Store.open(at: folder.file(name).path, configuration: behaviourConfiguration())
}

// MARK: Feeds

/// A version-1 feed document as text.
func behaviourFeed(
    version: JSONValue? = .integer(1),
    frameworks: [JSONValue]? = nil, orders: [JSONValue]? = nil, events: [JSONValue]? = nil, images: [JSONValue]? = nil,
    deleted: [RecordKind: [String]] = [:], next: String? = nil
) -> String {
    var members: [JSONMember] = []
    if let version { members.append(JSONMember("version", version)) }
    if let frameworks { members.append(JSONMember("frameworks", .array(frameworks))) }
    if let orders { members.append(JSONMember("orders", .array(orders))) }
    if let events { members.append(JSONMember("events", .array(events))) }
    if let images { members.append(JSONMember("images", .array(images))) }
    if !deleted.isEmpty {
        members.append(
            JSONMember(
                "deleted",
                .object(
                    RecordKind.allCases.compactMap { kind in
                        deleted[kind].map { JSONMember(kind.plural, .array($0.map(JSONValue.string))) }
                    })))
    }
    if let next { members.append(JSONMember("next", .string(next))) }
    return JSONWriter(pretty: true).string(.object(members))
}

/// A feed with `records` of one kind.
func behaviourFeed(_ kind: KindFixture, _ records: [JSONValue], deleted: [String] = []) -> String {
    switch kind {
    case .framework: behaviourFeed(frameworks: records, deleted: deleted.isEmpty ? [:] : [.framework: deleted])
    case .order: behaviourFeed(orders: records, deleted: deleted.isEmpty ? [:] : [.order: deleted])
    case .event: behaviourFeed(events: records, deleted: deleted.isEmpty ? [:] : [.event: deleted])
    }
}

func imageJSON(_ url: String, data: Data? = nil, contentType: String? = nil) -> JSONValue {
    var members = [JSONMember("url", .string(url))]
    if let data { members.append(JSONMember("data", .string(data.base64EncodedString()))) }
    if let contentType { members.append(JSONMember("contentType", .string(contentType))) }
    return .object(members)
}

/// One record kind, with a record of each (id, version) and local reads and writes of it.
enum KindFixture: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case framework, order, event

    var testDescription: String { rawValue }

    var kind: RecordKind {
        switch self {
        case .framework: .framework
        case .order: .order
        case .event: .event
        }
    }

    func framework(_ id: String, _ version: Int) -> Framework {
        Framework(
            id: id, name: "\(id) v\(version)", imageName: "image-\(id)", urlString: "https://example.com/\(id)",
            description: "version \(version) of \(id)")
    }

    func order(_ id: String, _ version: Int) -> Order {
        Order(
            id: id, placedAt: Date(timeIntervalSince1970: 1_790_000_000 + Double(version) * 60),
            items: [
                OrderItem(itemName: "item v\(version)", price: Money(minorUnits: Int64(100 + version)), aisle: version),
                OrderItem(itemName: "second", price: Money(minorUnits: 10), aisle: 0, quantity: version + 1),
            ])
    }

    func event(_ id: String, _ version: Int) -> Event {
        Event(
            id: id, title: "\(id) v\(version)", date: CalendarDate(year: 2026, month: 6, day: version)!,
            notes: version.isMultiple(of: 2) ? "notes v\(version)" : nil)
    }

    /// The record as the feed (and an export) writes it.
    func json(_ id: String, _ version: Int) -> JSONValue {
        switch self {
        case .framework: framework(id, version).jsonValue
        case .order: order(id, version).jsonValue()
        case .event: event(id, version).jsonValue
        }
    }

    func insert(_ id: String, _ version: Int, into store: Store) async throws {
        switch self {
        case .framework: try await store.frameworks.insert(framework(id, version))
        case .order: try await store.orders.insert(order(id, version))
        case .event: try await store.events.insert(event(id, version))
        }
    }

    func update(_ id: String, _ version: Int, in store: Store) async throws {
        switch self {
        case .framework: try await store.frameworks.update(framework(id, version))
        case .order: try await store.orders.update(order(id, version))
        case .event: try await store.events.update(event(id, version))
        }
    }

    func delete(_ id: String, from store: Store) async throws {
        let deleted: Bool
        switch self {
        case .framework: deleted = try await store.frameworks.delete(id)
        case .order: deleted = try await store.orders.delete(id)
        case .event: deleted = try await store.events.delete(id)
        }
        #expect(deleted)
    }

    /// The local record, as JSON (nil if absent).
    func current(_ id: String, in store: Store) async throws -> JSONValue? {
        switch self {
        case .framework: try await store.frameworks.find(id)?.jsonValue
        case .order: try await store.orders.find(id)?.jsonValue()
        case .event: try await store.events.find(id)?.jsonValue
        }
    }

    /// Which local version `id` is at: the `version` whose record equals it, nil if absent.
    func version(_ id: String, in store: Store) async throws -> Int? {
        guard let current = try await current(id, in: store) else { return nil }
        return (1...9).first { json(id, $0) == current } ?? -1
    }
}

func counts(inserted: Int = 0, updated: Int = 0, kept: Int = 0, unchanged: Int = 0, deleted: Int = 0) -> SyncReport.Counts {
    var counts = SyncReport.Counts()
    counts.inserted = inserted
    counts.updated = updated
    counts.kept = kept
    counts.unchanged = unchanged
    counts.deleted = deleted
    return counts
}

/// Every count of a report but its status: what a dry run and a real run must agree on.
struct ReportCounts: Equatable, CustomStringConvertible {
    var frameworks, orders, events: SyncReport.Counts
    var images: SyncReport.ImageCounts
    var conflicts: [Change]

    init(_ report: SyncReport) {
        frameworks = report.frameworks
        orders = report.orders
        events = report.events
        images = report.images
        conflicts = report.conflicts
    }

    var description: String { "\(frameworks) \(orders) \(events) \(images) \(conflicts.map { "\($0.kind):\($0.key)" })" }
}

// MARK: Transports

/// A latch: `wait()` suspends until `open()` was called (before or after).
actor BehaviourLatch {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}

/// Wraps a transport: records every request, can wait before sending, and can drop response
/// headers (to play a server without ETag).
final class RecordingTransport: Sendable {
    let requests = Locked<[HTTPRequest]>([])
    let base: HTTPTransport
    let delay: Duration?
    let droppingHeaders: Set<String>

    init(base: HTTPTransport = .live, delay: Duration? = nil, droppingHeaders: Set<String> = []) {
        self.base = base
        self.delay = delay
        self.droppingHeaders = droppingHeaders
    }

    var transport: HTTPTransport {
        HTTPTransport { [self] request in
            requests.withLock { $0.append(request) }
            if let delay { try await Task.sleep(for: delay) }
            var response = try await base.send(request)
            for name in droppingHeaders { response.headers[name] = nil }
            return response
        }
    }

    func requests(to path: String) -> [HTTPRequest] {
        requests.current.filter { $0.url.path == path }
    }
}

/// A transport that serves fixed bodies by URL, holding each request until the test opens
/// `release`; `requested` opens when the first request arrives.
final class GatedTransport: Sendable {
    let requested = BehaviourLatch()
    let release = BehaviourLatch()
    let bodies: [String: Data]
    let count = Locked(0)

    init(bodies: [String: Data]) { self.bodies = bodies }

    var transport: HTTPTransport {
        HTTPTransport { [self] request in
            count.withLock { $0 += 1 }
            await requested.open()
            await release.wait()
            guard let body = bodies[request.url.absoluteString] else {
                return HTTPResponse(url: request.url, status: 404)
            }
            return HTTPResponse(url: request.url, status: 200, headers: ["Content-Type": "application/json"], body: body)
        }
    }
}

/// Raises the error `body` throws, or records an issue if it returns.
func behaviourError<T>(
    sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T
) async -> (any Error)? {
    do {
        _ = try await body()
        Issue.record("expected an error", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}

/// The raw bytes of the store's files (database, WAL), for "never stored" checks.
func storeFileBytes(_ store: Store) throws -> Data {
    var data = Data()
    for suffix in ["", "-wal", "-journal"] {
        if let path = store.path, let bytes = FileManager.default.contents(atPath: path + suffix) { data.append(bytes) }
    }
    return data
}
