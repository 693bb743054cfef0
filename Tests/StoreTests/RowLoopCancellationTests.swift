import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// A read or write whose task is cancelled ends inside its loops over rows (`forEachRow`,
/// `query`, and so `fetchAll` and the tables' reads), within a few hundred rows, not after
/// the last: Ctrl-C on a long `storectl orders list` stops it.
@Suite("Row loops see cancellation")
struct RowLoopCancellationTests {
    private static let thousandRows =
        "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 1000) SELECT x FROM n"

    @Test("a cancelled flag stops forEachRow and fetchAll within one interval; a live one or none does not")
    func theConnectionsLoopsLookAtTheFlag() async throws {
        try await withTemporaryDirectory { directory throws in
            let db = try Database(path: directory.databasePath, options: .init())
            defer { db.close() }
            let interval = Database.rowsBetweenCancellationChecks
            #expect(try db.fetchAll(Self.thousandRows).count == 1_000)
            let flag = CancellationFlag()
            db.cancellation = flag
            #expect(try db.fetchAll(Self.thousandRows).count == 1_000)
            flag.cancel()
            var handed = 0
            #expect(throws: CancellationError.self) { try db.forEachRow(Self.thousandRows) { _ in handed += 1 } }
            #expect(handed == interval - 1)
            #expect(throws: CancellationError.self) { try db.fetchAll(Self.thousandRows).count }
            db.cancellation = nil
            #expect(try db.fetchAll(Self.thousandRows).count == 1_000)
        }
    }

    @Test("orders.fetchAll in a read whose task is cancelled throws CancellationError")
    func aCancelledReadOfOrdersEnds() async throws {
        try await withTemporaryStore { store, _ throws in
            let count = Database.rowsBetweenCancellationChecks + 50
            try await store.write { db in
                for number in 0..<count { try db.orders.insert(Fixtures.order("o-\(number)", prices: ["1"])) }
            }
            let started = DispatchSemaphore(value: 0)
            let read = Task {
                try await store.read { db -> Int in
                    started.signal()
                    // Waits (at most 60 s) until the task is cancelled, then reads every order.
                    let deadline = Date().addingTimeInterval(60)
                    while (try? db.checkCancellation()) != nil, Date() < deadline { usleep(200) }
                    return try db.orders.fetchAll().count
                }
            }
            #expect(await wait(for: started))
            read.cancel()
            await #expect(throws: CancellationError.self) { _ = try await read.value }
            #expect(try await store.orders.count() == count)
        }
    }
}
