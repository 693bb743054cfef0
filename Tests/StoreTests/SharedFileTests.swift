import Foundation
import Testing

@testable import Store

/// Two `Store` instances on one file stand in for two processes: each has its own connections,
/// and only SQLite's file locks keep them apart.
@Suite("Two stores on one file")
struct SharedFileTests {
    @Test func bothWriteConcurrentlyAndEachSeesTheOthersCommits() async throws {
        let writesEach = 150
        try await withTemporaryStore { first, directory throws in
            try await withStore(at: directory.databasePath) { second throws in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (name, store) in [("first", first), ("second", second)] {
                        group.addTask {
                            for number in 0..<writesEach {
                                try await store.frameworks.insert(Fixtures.framework("\(name)-\(number)"))
                            }
                        }
                        group.addTask {
                            for number in 0..<writesEach / 3 {
                                try await store.orders.insert(Fixtures.order("\(name)-o\(number)", prices: ["0.10", "0.20"]))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                for store in [first, second] {
                    #expect(try await store.frameworks.count() == 2 * writesEach)
                    #expect(try await store.orders.count() == 2 * (writesEach / 3))
                }
                #expect(try await second.frameworks.find("first-0") != nil)
                #expect(try await first.orders.total("second-o0") == Money("0.30"))
            }
        }
    }

    @Test func oneStoreReadsWhileTheOtherHoldsAWriteOpen() async throws {
        try await withTemporaryStore { writer, directory throws in
            try await withStore(at: directory.databasePath) { reader throws in
                let inserted = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
                let write = Task {
                    try await writer.write { db -> Bool in
                        try db.frameworks.insert(Fixtures.framework("pending"))
                        inserted.signal()
                        return release.wait(timeout: .now() + 240) == .success
                    }
                }
                #expect(await wait(for: inserted))
                let seen = try await reader.frameworks.find("pending")
                release.signal()
                #expect(try await write.value)
                #expect(seen == nil)
                #expect(try await reader.frameworks.find("pending") != nil)
            }
        }
    }
}
