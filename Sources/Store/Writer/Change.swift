/// One record changed by a committed transaction.
public struct Change: Sendable, Hashable, Codable {
    public enum Operation: String, Sendable, Codable { case insert, update, delete }

    public let kind: RecordKind
    /// The record's key: its id, or its url for images.
    public let key: String
    public let operation: Operation
    /// For events, every date the change touched: the old and the new date of a moved event, the
    /// date of a deleted one. Empty for other kinds.
    public let dates: [CalendarDate]

    public init(kind: RecordKind, key: String, operation: Operation, dates: [CalendarDate] = []) {
        self.kind = kind
        self.key = key
        self.operation = operation
        self.dates = dates
    }
}
