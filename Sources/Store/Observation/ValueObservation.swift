/// A query to observe: what it fetches and which changes may alter its result.
///
/// ```swift
/// for try await frameworks in store.observe(.allFrameworks) { reload(frameworks) }
/// ```
public struct ValueObservation<Value: Sendable & Equatable>: Sendable {
    /// Whether a change may alter the value; changes it rejects cause no fetch.
    let isAffected: @Sendable (Change) -> Bool
    let fetch: @Sendable (Database) throws -> Value

    /// Observes `fetch`, refetched after every transaction with a change that `isAffected` accepts.
    public init(isAffected: @escaping @Sendable (Change) -> Bool, fetch: @escaping @Sendable (Database) throws -> Value) {
        self.isAffected = isAffected
        self.fetch = fetch
    }

    /// Observes `fetch`, refetched after every transaction that changes a record of `kinds`.
    public init(kinds: Set<RecordKind>, fetch: @escaping @Sendable (Database) throws -> Value) {
        self.init(isAffected: { kinds.contains($0.kind) }, fetch: fetch)
    }
}

extension ValueObservation where Value == [Framework] {
    /// Every framework, by id.
    public static var allFrameworks: Self { Self(kinds: [.framework]) { try $0.frameworks.fetchAll() } }
}

extension ValueObservation where Value == Framework? {
    /// One framework; nil while there is none with that id.
    public static func framework(id: String) -> Self {
        Self(isAffected: { $0.kind == .framework && $0.key == id }) { try $0.frameworks.find(id) }
    }
}

extension ValueObservation where Value == [Order] {
    public static var allOrders: Self { Self(kinds: [.order]) { try $0.orders.fetchAll() } }
}

extension ValueObservation where Value == Order? {
    public static func order(id: String) -> Self {
        Self(isAffected: { $0.kind == .order && $0.key == id }) { try $0.orders.find(id) }
    }
}

extension ValueObservation where Value == [Event] {
    public static var allEvents: Self { Self(kinds: [.event]) { try $0.events.fetchAll() } }

    /// The events of one month; refetched only when a change touches a date of that month.
    public static func events(in month: YearMonth) -> Self {
        Self(isAffected: { change in change.kind == .event && change.dates.contains { $0.yearMonth == month } }) {
            try $0.events.inMonth(month)
        }
    }
}

extension ValueObservation where Value == Event? {
    public static func event(id: String) -> Self {
        Self(isAffected: { $0.kind == .event && $0.key == id }) { try $0.events.find(id) }
    }
}

extension ValueObservation where Value == [DateCount] {
    /// The days of a month that have events, with counts: a calendar's decorations.
    public static func eventDates(in month: YearMonth) -> Self {
        Self(isAffected: { change in change.kind == .event && change.dates.contains { $0.yearMonth == month } }) {
            try $0.events.dates(in: month)
        }
    }
}

extension ValueObservation where Value == [CachedImageInfo] {
    public static var allImages: Self {
        Self(kinds: [.image]) { try $0.images(budget: .max, now: .distantPast).fetchAllInfo() }
    }
}
