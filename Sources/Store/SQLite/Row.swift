/// One row of a query: its column names and values, copied out of the statement.
public struct Row: Sendable, Equatable {
    public let columns: [String]
    public let values: [SQLValue]

    init(statement: Statement) {
        let count = statement.columnCount
        columns = (0..<count).map(statement.columnName)
        values = (0..<count).map(statement.value)
    }

    public subscript(index: Int) -> SQLValue { values[index] }

    /// The value of the first column with this name, or nil if there is none.
    public subscript(name: String) -> SQLValue? {
        columns.firstIndex(of: name).map { values[$0] }
    }
}
