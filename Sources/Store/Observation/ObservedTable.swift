/// A table whose row changes are changes of records of one kind, as the writer's change
/// collector sees them (see `ChangeCollector`).
///
/// Every row inserted, updated or deleted in `table` is a change of the record whose key is in
/// `keyColumn`. A table that is not the kind's own (`order_items`, keyed by `order_id`) reports
/// each of its row changes as an `update` of that record, folded into the record's own change
/// (an order inserted with three items is one `insert`).
struct ObservedTable: Sendable, Hashable {
    /// The table's name, in the main database.
    let table: String
    let kind: RecordKind
    /// The column holding the record's key (TEXT).
    let keyColumn: String
    /// For events: the column holding the date, reported as the change's `dates`.
    let dateColumn: String?

    /// Whether the table holds the records themselves; false for a table of their parts
    /// (`order_items`), whose every row change is an `update` of the record.
    let holdsRecords: Bool

    init(table: String, kind: RecordKind, keyColumn: String, dateColumn: String? = nil, holdsRecords: Bool = true) {
        self.table = table
        self.kind = kind
        self.keyColumn = keyColumn
        self.dateColumn = dateColumn
        self.holdsRecords = holdsRecords
    }

    /// The built-in kinds' tables: the one list the writer observes. (A registered record kind
    /// will add its own tables here.)
    static let builtIn: [ObservedTable] = [
        ObservedTable(table: "frameworks", kind: .framework, keyColumn: "id", dateColumn: nil),
        ObservedTable(table: "orders", kind: .order, keyColumn: "id", dateColumn: nil),
        ObservedTable(table: "order_items", kind: .order, keyColumn: "order_id", holdsRecords: false),
        ObservedTable(table: "events", kind: .event, keyColumn: "id", dateColumn: "date"),
        ObservedTable(table: "images", kind: .image, keyColumn: "url", dateColumn: nil),
    ]
}
