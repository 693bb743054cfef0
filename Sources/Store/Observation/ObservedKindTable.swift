/// A table the writer's change collector watches, with the kind its rows belong to (see
/// `ChangeCollector`).
///
/// Every row inserted, updated or deleted in the table is a change of the record whose key is in
/// its key column. A table of a kind's parts (`order_items`, keyed by `order_id`) reports each of
/// its row changes as an `update` of that record, folded into the record's own change (an order
/// inserted with three items is one `insert`).
struct ObservedKindTable: Sendable, Hashable {
    let kind: RecordKind
    let observed: ObservedTable
    /// Whether the table holds the records themselves; false for a table of their parts.
    let holdsRecords: Bool

    init(_ kind: RecordKind, _ observed: ObservedTable, holdsRecords: Bool = true) {
        self.kind = kind
        self.observed = observed
        self.holdsRecords = holdsRecords
    }

    /// The built-in kinds' tables.
    static var builtIn: [ObservedKindTable] { RecordKinds.builtIn.flatMap(\.observedTables) }

    /// The built-in tables and those of the registered kinds (`StoreRecord.observedTables`; the
    /// kind's own `table` holds its records, any other is of its parts).
    static func all(registering recordTypes: [any StoreRecord.Type]) -> [ObservedKindTable] {
        RecordKinds.handlers(registering: recordTypes).flatMap(\.observedTables)
    }
}
