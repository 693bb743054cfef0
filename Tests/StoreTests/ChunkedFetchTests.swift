import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// `store.frameworks.fetchAll()` and `store.events.fetchAll()` copy rows into chunks on a
/// reader's thread and decode them on the caller's (`Store.fetchAll`, `RowChunk`,
/// `ReaderPool.stream`): the same records, in the same order, as one read decoding in place.
@Suite("Fetching in chunks", .timeLimit(.minutes(10)))
struct ChunkedFetchTests {
    /// Frameworks whose rows fill many chunks (about 2 KB a row, chunks of 24 to 96 KB).
    static func frameworks(_ count: Int) -> [Framework] {
        (0..<count).map { index in
            Framework(
                id: String(format: "fw-%05d", index), name: "Name \(index) é 🦆", imageName: "image-\(index)",
                urlString: "https://example.com/\(index)", description: String(repeating: "d\(index % 10)", count: 1000))
        }
    }

    @Test func manyChunksComeBackWholeAndInOrder() async throws {
        try await withTemporaryStore { store, _ throws in
            #expect(try await store.frameworks.fetchAll() == [])
            // Inserted out of order: fetchAll orders by id.
            let all = Self.frameworks(3000)
            try await store.frameworks.insert(all.reversed())
            let fetched = try await store.frameworks.fetchAll()
            #expect(fetched == all)
            #expect(try await store.read { try $0.frameworks.fetchAll() } == fetched)
            // Again: the first chunk now carries the last count, reserved at once.
            #expect(try await store.frameworks.fetchAll() == all)
        }
    }

    @Test func eventsWithAndWithoutNotes() async throws {
        try await withTemporaryStore { store, _ throws in
            let events = (0..<500).map { index in
                Event(
                    id: "e-\(index)", title: "Title \(index)", date: Fixtures.date("2026-11-\(10 + index % 20)"),
                    notes: index % 3 == 0 ? nil : String(repeating: "n", count: index % 7))
            }
            try await store.write { db in for event in events { try db.events.insert(event) } }
            let fetched = try await store.events.fetchAll()
            #expect(fetched == (try await store.read { try $0.events.fetchAll() }))
            #expect(fetched.count == 500 && fetched.filter { $0.notes == nil }.count == 167)
            #expect(fetched.contains { $0.notes == "" })
        }
    }

    @Test func aStoreInMemoryFetchesTheSame() async throws {
        let store = try await Store.inMemory()
        let all = Self.frameworks(200)
        try await store.frameworks.insert(all)
        #expect(try await store.frameworks.fetchAll() == all)
        await store.close()
    }

    @Test func aBadStoredValueThrowsNamingTheRecord() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.events.insert(Event(id: "good", title: "T", date: Fixtures.date("2026-11-25")))
            // Written around the table's rules, as another tool could.
            try await store.write { db in
                try db.execute("PRAGMA ignore_check_constraints = ON")
                try db.execute("INSERT INTO events (id, title, date) VALUES ('bad', 'T', 'not a date')")
            }
            do {
                _ = try await store.events.fetchAll()
                Issue.record("a stored date that is no date was fetched")
            } catch StoreError.invalidRecord(let kind, let key, let field, _) {
                #expect(kind == .event && key == "bad" && field == "date")
            }
        }
    }

    /// One value far larger than a chunk (chunks hold 24 to 96 KB): copied whole into its own.
    @Test func aValueLargerThanAChunkComesBackWhole() async throws {
        try await withTemporaryStore { store, _ throws in
            var all = Self.frameworks(100)
            all[50].description = String(repeating: "0123456789é", count: 500_000) // 6 MB
            try await store.frameworks.insert(all)
            let fetched = try await store.frameworks.fetchAll()
            #expect(fetched.count == 100 && fetched[50].description.utf8.count == 6_000_000)
            #expect(fetched == all)
        }
    }

    @Test func aCancelledTaskGetsCancellationNotAPartialArray() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Self.frameworks(8000))
            var cancelled = 0
            // Cancelled at moments spread over the fetch (about 10 to 40 ms here): before it
            // starts, while chunks are coming, after it ends.
            for delay in [0, 100, 300, 1000, 2000, 4000, 8000, 16_000, 60_000] {
                let task = Task { try await store.frameworks.fetchAll() }
                if delay > 0 { try await Task.sleep(for: .microseconds(delay)) }
                task.cancel()
                switch await task.result {
                case .success(let all): #expect(all.count == 8000, "a cancelled fetch returned \(all.count) records")
                case .failure(let error):
                    #expect(error is CancellationError, "\(error)")
                    cancelled += 1
                }
            }
            #expect(cancelled > 0)
            // The reader is back in the pool and works.
            #expect(try await store.frameworks.fetchAll().count == 8000)
        }
    }

    @Test func aClosedStoreThrowsClosed() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Self.frameworks(10))
            await store.close()
            await #expect(throws: StoreError.closed) { try await store.frameworks.fetchAll() }
            await #expect(throws: StoreError.closed) { try await store.events.fetchAll() }
        }
    }

    /// Every SQLite type through each way of copying a column reads back as `Statement` reads it.
    @Test func aChunkReadsBackWhatTheStatementReads() throws {
        let database = try Database(path: ":memory:", options: .init(readOnly: false, create: true, busyTimeout: .seconds(1)))
        try database.execute("CREATE TABLE t (a, b, c)")
        let values: [SQLValue] = [
            .null, .integer(-42), .integer(.max), .real(2.5), .real(-0.1), .text(""), .text("nul \u{0} inside é 🦆"),
            .blob(Data()), .blob(Data([0, 1, 255])),
        ]
        for value in values { try database.execute("INSERT INTO t VALUES (?, ?, ?)", [value, value, value]) }
        let statement = try database.cachedStatement("SELECT a, b, c FROM t ORDER BY rowid")
        var chunk = RowChunk(columns: [.value, .text, .optionalText], reservingBytes: 8)
        var expected: [(SQLValue, String, String?)] = []
        while try statement.step() {
            chunk.appendRow(of: statement)
            expected.append((statement.value(0), statement.text(1), statement.optionalText(2)))
        }
        statement.reset()
        #expect(chunk.rowCount == values.count)
        var index = 0
        chunk.forEachRow { row in
            #expect(row.value(0) == expected[index].0, "row \(index)")
            #expect(row.text(1) == expected[index].1, "row \(index)")
            #expect(row.optionalText(2) == expected[index].2, "row \(index)")
            index += 1
        }
        #expect(index == values.count)
        #expect(expected[0].0 == .null && expected[6].0 == .text("nul \u{0} inside é 🦆"))
    }
}
