import Foundation

/// Reads the columns of a built-in kind's row that SQLite's types do not guarantee. Written
/// around the store (another tool, `PRAGMA ignore_check_constraints`), an integer column may
/// hold text, a real, a blob or null, or an integer the store never writes; each is
/// `StoreError.invalidRecord` naming the record and field, never a wrong value or a trap:
/// `sqlite3_column_int64` read `'abc'` as 0 (a time in 1970) and `2.5` as 2.
enum StoredValue {
    /// A stored integer, within `bounds` if given.
    static func integer(
        _ row: Statement, _ column: Int32, kind: RecordKind, key: String, field: @autoclosure () -> String,
        within bounds: ClosedRange<Int64>? = nil
    ) throws -> Int64 {
        let value = row.value(column)
        guard case .integer(let integer) = value else {
            throw StoreError.invalidRecord(
                kind: kind, key: key, field: field(), reason: "the stored value \(describe(value)) is not an integer")
        }
        if let bounds, !bounds.contains(integer) {
            throw StoreError.invalidRecord(
                kind: kind, key: key, field: field(),
                reason: "the stored value \(integer) is outside \(bounds.lowerBound) to \(bounds.upperBound)")
        }
        return integer
    }

    /// A stored time (milliseconds since 1970, UTC) within years 0001 to 9999, as the store
    /// writes every time.
    static func time(
        _ row: Statement, _ column: Int32, kind: RecordKind, key: String, field: @autoclosure () -> String
    ) throws -> Date {
        let milliseconds = try integer(row, column, kind: kind, key: key, field: field())
        guard Timestamp.range.contains(milliseconds) else {
            throw StoreError.invalidRecord(
                kind: kind, key: key, field: field(), reason: "the stored time \(milliseconds) ms is outside years 0001 to 9999")
        }
        return Timestamp.date(milliseconds: milliseconds)
    }

    /// A value as an error quotes it: text cut at 40 characters, a blob by its size.
    static func describe(_ value: SQLValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): "'" + (text.count > 40 ? text.prefix(40) + "..." : text) + "'"
        case .blob(let data): "(a blob of \(data.count) byte\(data.count == 1 ? "" : "s"))"
        }
    }
}
