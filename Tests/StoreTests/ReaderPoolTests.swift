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

    /// The last connection to a WAL database checkpoints and deletes the `-wal` file by name when
    /// it closes; a reader closed after `close()` returned deleted the WAL of a new store made
    /// at the same path (SQLITE_IOERR_SHORT_READ on its first read, about one run in two of the
    /// benchmark, which reopens one path). Now every connection is closed when `close()` returns.
    @Test func closeReturnsOnlyOnceEveryConnectionIsClosedSoAStoreAtTheSamePathIsUnharmed() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.databasePath
        for round in 0..<30 {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
            let store = try await Store.open(at: path)
            try await store.frameworks.insert(
                Framework(id: "f\(round)", name: "n", imageName: "i", urlString: "u", description: "d"))
            // Reads on several connections, the last ones still finishing as close() starts.
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { _ = try? await store.frameworks.count() } }
            }
            let counting = Task { try? await store.frameworks.count() }
            await store.close()
            #expect(store.openReaderConnections == 0, "round \(round): every reader is closed when close() returns")
            _ = await counting.value
        }
        // The files of the last round's store, deleted and made anew while nothing has them open.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let store = try await Store.open(at: path)
        try await store.frameworks.insert(Framework(id: "new", name: "n", imageName: "i", urlString: "u", description: "d"))
        #expect(try await store.frameworks.count() == 1)
        await store.close()
    }
}
