// Observing events (see `Store.observe(_:)` for the protocol). An event's changes carry the
// dates they touch, so a month's observation refetches only for its own dates.

extension ValueObservation where Value == [Event] {
    /// Every event, by date then id.
    public static var allEvents: Self { Self(kinds: [.event]) { try $0.events.fetchAll() } }

    /// The events of one month; refetched only when a change touches a date of that month.
    public static func events(in month: YearMonth) -> Self {
        Self(isAffected: { change in change.kind == .event && change.dates.contains { $0.yearMonth == month } }) {
            try $0.events.inMonth(month)
        }
    }
}

extension ValueObservation where Value == Event? {
    /// One event; nil while there is none with that id.
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

extension EventStore {
    /// The set of dates whose events changed, once per committed transaction that changed
    /// events: the old and the new date of a moved event, the date of a deleted one. A sync that
    /// touches many dates emits them all at once. Same protocol as `Store.changes(of:)`, except
    /// that transactions pruned from the change log before they were read
    /// (`ChangeBatch.missedTransactions`) are not reported: use `Store.changes(of:)` for that.
    public func changedDates() -> AsyncStream<Set<CalendarDate>> {
        let changes = store.changes(of: [.event])
        return AsyncStream { continuation in
            let task = Task {
                for await batch in changes {
                    let dates = batch.eventDates
                    if !dates.isEmpty { continuation.yield(dates) }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Observes the events of one month (see `Store.observe(_:)` for the protocol).
    public func observe(month: YearMonth) -> AsyncThrowingStream<[Event], any Error> { store.observe(.events(in: month)) }
}
