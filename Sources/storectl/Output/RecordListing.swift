import Store

/// How a `list` command prints records: a table, or a JSON array (`--json`), written as the
/// records are read, so that a list of any length runs in bounded memory.
///
/// Everything is read in one read transaction, one snapshot, walked twice: the first walk reads
/// every record (and measures the table's columns, as wide as their widest cell), the second
/// prints. So a record that cannot be read (a stored value out of its kind's rules, written
/// around the store) fails the command before anything is printed: a list is printed whole or
/// not at all, but for a failing write to stdout itself. The JSON is the bytes `JSONWriter` gives
/// for the whole array.
struct RecordListing<Record>: Sendable {
    /// The headers and alignment of the table.
    let table: Table
    /// A record's cells, in the table's columns.
    let cells: @Sendable (Record) throws -> [String]
    /// A record as an element of the JSON array: every record read can be written, so the
    /// first walk of a JSON list only reads.
    let json: @Sendable (Record) -> JSONValue

    /// Prints the records `fetchEach` walks (each once per call, in the same order every time)
    /// on `store`'s reader, to stdout.
    func print(
        from store: Store, asJSON: Bool,
        _ fetchEach: @escaping @Sendable (Database, (Record) throws -> Void) throws -> Void
    ) async throws {
        try await store.read { db in
            let output = BufferedOutput()
            if asJSON {
                try fetchEach(db) { _ in } // every record read before any is printed
                var array = JSONArrayWriter()
                try fetchEach(db) { try output.write(array.element(json($0))) }
                try output.write(array.end() + "\n")
            } else {
                var table = table
                try fetchEach(db) { table.measure(try cells($0)) }
                try output.writeLine(table.heading)
                try fetchEach(db) { try output.writeLine(table.line(try cells($0))) }
            }
            try output.flush()
        }
    }
}
