/// One record changed by a committed transaction, as observers (`Store.changes(of:)`,
/// `storectl watch`) and the change log see it, collected from SQLite's own hooks (raw SQL
/// included). Within one write, all the row changes of one record are one change (an order
/// inserted with its items is one `insert`; inserted then deleted is a `delete`).
public struct Change: Sendable, Hashable, Codable {
    /// What the transaction did to the record. The raw value (`insert`, `update`, `delete`) is
    /// what the change log and `storectl watch` print.
    public enum Operation: String, Sendable, Codable {
        /// The record did not exist before the transaction and does now.
        case insert
        /// The record existed and was written again (an `UPDATE`, or a replace of its row),
        /// whether or not a value differs: observers re-read it.
        case update
        /// The record existed and no longer does.
        case delete
    }

    /// The kind of the record: a built-in one or an app's registered kind.
    public let kind: RecordKind
    /// The record's key: its id, or its url for images.
    public let key: String
    /// What happened to it.
    public let operation: Operation
    /// For events, every date the change touched: the old and the new date of a moved event, the
    /// date of a deleted one. Empty for other kinds.
    public let dates: [CalendarDate]

    /// A change as given; nothing is checked (`dates` is meant for events only).
    public init(kind: RecordKind, key: String, operation: Operation, dates: [CalendarDate] = []) {
        self.kind = kind
        self.key = key
        self.operation = operation
        self.dates = dates
    }
}
