import Foundation
import Testing

@testable import Store

@Suite("Reader pool")
struct ReaderPoolTests {
    @Test func readsQueuedBehindAFailedOpenFailTooInsteadOfWaitingForever() async throws {
        var configuration = Store.Configuration()
        configuration.maximumReaders = 1
        try await withTemporaryStore(configuration: configuration) { store, directory in
            // With the file gone, no reader connection can open (readers never create it).
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: directory.databasePath + suffix) }
            let outcomes = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<5 {
                    group.addTask { (try? await store.frameworks.count()) == nil }
                }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            #expect(outcomes == Array(repeating: true, count: 5), "every read fails with an error, none hangs")
            #expect(store.openReaderConnections == 0)
        }
    }
}
