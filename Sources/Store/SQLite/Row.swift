/// One row of a query: its column names and values, copied out of the statement.
///
/// A row owns its values: it stays valid after the statement moves on or the transaction ends.
public struct Row: Sendable, Equatable {
    /// The result columns' names, in the query's order (`SELECT a AS x` gives `x`).
    public let columns: [String]
    /// The values, one per column, in the same order.
    public let values: [SQLValue]

    init(statement: Statement) {
        let count = statement.columnCount
        columns = (0..<count).map(statement.columnName)
        values = (0..<count).map(statement.value)
    }

    /// The value of the column at `index` (from 0); `index` must be less than `values.count`
    /// (a precondition: a bad index is a programming error).
    public subscript(index: Int) -> SQLValue { values[index] }

    /// The value of the first column with this name, or nil if there is none.
    public subscript(name: String) -> SQLValue? {
        columns.firstIndex(of: name).map { values[$0] }
    }
}
