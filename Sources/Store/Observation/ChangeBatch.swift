import Foundation

/// The records changed by one committed write transaction, in this process or another.
public struct ChangeBatch: Sendable, Equatable {
    /// The transaction's position in the change log: increases with every logged transaction.
    public let transaction: Int64
    /// Each record the transaction inserted, updated or deleted, in the order it was written
    /// (limited to the kinds the stream asked for).
    public let changes: [Change]
    /// Transactions committed before this one, since the last batch this stream was offered,
    /// whose changes it never saw: 0 normally. The change log keeps the last 10,000
    /// transactions, and at most 64 MiB of them; an observer whose process was suspended (or whose store's monitor did not
    /// read) while more than that committed finds the older ones pruned. When it is not 0, what
    /// was derived from earlier batches may be stale: reload it. (A value observation refetches
    /// on its own; a change stream emits such a batch even when it has no change of the kinds
    /// asked for.)
    public let missedTransactions: Int64

    init(transaction: Int64, changes: [Change], missedTransactions: Int64 = 0) {
        self.transaction = transaction
        self.changes = changes
        self.missedTransactions = missedTransactions
    }

    /// The kinds of record it touched.
    public var kinds: Set<RecordKind> { Set(changes.map(\.kind)) }

    /// Every event date it touched: old and new dates of moved events, dates of deleted ones.
    public var eventDates: Set<CalendarDate> {
        Set(changes.lazy.filter { $0.kind == .event }.flatMap(\.dates))
    }
}

extension Change {
    /// `{"kind": "event", "key": "e-1", "operation": "update", "dates": ["2026-06-08"]}`.
    package var jsonValue: JSONValue {
        var members = [
            JSONMember("kind", .string(kind.rawValue)), JSONMember("key", .string(key)),
            JSONMember("operation", .string(operation.rawValue)),
        ]
        if kind == .event { members.append(JSONMember("dates", .array(dates.map { .string($0.description) }))) }
        return .object(members)
    }

    /// The changes one element of a change-log text stands for, in order: several for
    /// `{kind, operation, keys}`, one for `{kind, key, operation, dates}` (see
    /// `ChangeLogTable.encode`); none for an element it does not understand.
    static func changes(inLogElement json: JSONValue) -> [Change] {
        guard case .string(let kindText)? = json["kind"], case let kind = RecordKind(rawValue: kindText),
            case .string(let operationText)? = json["operation"], let operation = Operation(rawValue: operationText)
        else { return [] }
        if case .array(let keys)? = json["keys"] {
            return keys.compactMap {
                if case .string(let key) = $0 { Change(kind: kind, key: key, operation: operation) } else { nil }
            }
        }
        guard case .string(let key)? = json["key"] else { return [] }
        var dates: [CalendarDate] = []
        if case .array(let values)? = json["dates"] {
            dates = values.compactMap { if case .string(let text) = $0 { CalendarDate(text) } else { nil } }
        }
        return [Change(kind: kind, key: key, operation: operation, dates: dates)]
    }
}
