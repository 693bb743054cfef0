/// A query to observe: what it fetches and which changes may alter its result.
///
/// ```swift
/// for try await reminders in store.observe(.all(Reminder.self)) { reload(reminders) }
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

extension ValueObservation {
    /// Every record of a registered kind, by key; refetched after each transaction that
    /// changes one. (Each built-in kind has its own: `.allFrameworks`, `.allEvents`, ...)
    public static func all<Record: StoreRecord & Equatable>(_ type: Record.Type) -> Self where Value == [Record] {
        Self(kinds: [Record.kind]) { try $0.records(Record.self).fetchAll() }
    }

    /// One record of a registered kind by key; nil while there is none.
    public static func record<Record: StoreRecord & Equatable>(_ type: Record.Type, key: String) -> Self
    where Value == Record? {
        Self(isAffected: { $0.kind == Record.kind && $0.key == key }) { try $0.records(Record.self).find(key) }
    }
}
