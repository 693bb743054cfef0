import Foundation

extension Store {
    /// The rows of `query`, decoded: the async `fetchAll` of frameworks and events.
    ///
    /// A reader connection steps the query in one read transaction (one snapshot) and copies
    /// its rows into chunks (`RowChunk`), handed to this task as each fills
    /// (`ReaderPool.stream`); this task decodes each chunk while the reader copies the next.
    /// So the stepping and the decoding of a large fetch overlap on two cores, and every string
    /// of the result is allocated on the thread that goes on to use and free it, not on the
    /// reader's (`Benchmarks/Profiles/fetch.md`: records made on one core and freed on another
    /// cost both cores' caches). A store in memory (no readers) copies every chunk in one `read`, then decodes.
    ///
    /// - Throws: what `decode` throws (a stored value out of its kind's rules), and what `read`
    ///   throws: `CancellationError` once the task is cancelled (the reader stops at its next
    ///   chunk), ``StoreError/closed``.
    func fetchAll<Record>(
        _ query: String, columns: [ColumnCopy], decode: (RowChunk.ChunkRow) throws -> Record
    ) async throws -> [Record] {
        try Task.checkCancellation()
        let chunks: AsyncThrowingStream<RowChunk, any Error>
        if let readers {
            chunks = readers.stream { database, yield in try Self.copyRows(of: query, columns, on: database, yield) }
        } else {
            let all = try await read { database in
                var all: [RowChunk] = []
                try Self.copyRows(of: query, columns, on: database) {
                    all.append($0); return true
                }
                return all
            }
            chunks = AsyncThrowingStream { continuation in
                for chunk in all { continuation.yield(chunk) }
                continuation.finish()
            }
        }
        var records: [Record] = []
        for try await chunk in chunks {
            if records.isEmpty, chunk.rowCountHint > 0 { records.reserveCapacity(chunk.rowCountHint) }
            try chunk.forEachRow { records.append(try decode($0)) }
        }
        // A cancelled task's stream ends early without an error: the records are not all there.
        try Task.checkCancellation()
        return records.withoutExcessCapacity()
    }

    /// The bytes of rows the first chunk holds before it is handed over, small so that the
    /// caller starts decoding early; each next chunk holds twice as much, up to
    /// `largestRowChunkBytes`, so that hand-overs (a continuation resumed, often a thread woken)
    /// stay few. A chunk's allocation (a quarter more) stays under glibc's threshold for
    /// `mmap` (128 KiB at first): larger ones were mapped and unmapped each time, and a run of
    /// the `fetch` row went from 1.02-1.12x raw C to 1.13-1.24x with 1 MB chunks.
    static let firstRowChunkBytes = 24 * 1024
    static let largestRowChunkBytes = 96 * 1024

    /// Steps `query` on `database`, copying its rows into chunks handed to `yield` as each fills;
    /// stops when `yield` returns false.
    static func copyRows(
        of query: String, _ columns: [ColumnCopy], on database: Database, _ yield: (RowChunk) -> Bool
    ) throws {
        let statement = try database.cachedStatement(query)
        defer { statement.reset() }
        var limit = firstRowChunkBytes
        var chunk = RowChunk(columns: columns, reservingBytes: limit + limit / 4)
        chunk.rowCountHint = statement.lastRowCount
        var rows = 0
        while try statement.step() {
            chunk.appendRow(of: statement)
            rows += 1
            if chunk.byteCount >= limit {
                guard yield(chunk) else { return }
                limit = min(limit * 2, largestRowChunkBytes)
                chunk = RowChunk(columns: columns, reservingBytes: limit + limit / 4)
            }
        }
        statement.lastRowCount = rows
        if chunk.rowCount > 0 { _ = yield(chunk) }
    }
}
