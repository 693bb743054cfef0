import Foundation
import Testing

@testable import Store

@Suite("Database file")
struct DatabaseFileTests {
    private func permissions(_ path: String) throws -> Int? {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber).map { $0.intValue & 0o777 }
    }

    @Test func createsTheDatabaseReadableByItsOwnerOnly() async throws {
        try await withTemporaryStore { store, directory throws in
            try await store.frameworks.insert(Fixtures.framework("a"))
            #expect(try permissions(directory.databasePath) == 0o600)
            // SQLite gives the WAL the database file's permissions.
            let wal = directory.databasePath + "-wal"
            try #require(FileManager.default.fileExists(atPath: wal))
            #expect(try permissions(wal) == 0o600)
        }
    }

    @Test func leavesTheModeOfAnExistingFileAlone() async throws {
        try await withTemporaryDirectory { directory throws in
            let path = directory.databasePath
            try #require(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o640]))
            try await withStore(at: path) { store throws in
                try await store.frameworks.insert(Fixtures.framework("a"))
                #expect(try await store.frameworks.count() == 1)
            }
            #expect(try permissions(path) == 0o640)
        }
    }

    @Test func usesWriteAheadLogging() async throws {
        try await withTemporaryStore { store, _ throws in
            let mode = try await store.read { try $0.fetchOne("PRAGMA journal_mode")?[0].textValue }
            #expect(mode == "wal")
            let foreignKeys = try await store.read { try $0.fetchOne("PRAGMA foreign_keys")?[0].integerValue }
            #expect(foreignKeys == 1)
        }
    }

    /// storectl's way into a store on a full disk (see `Configuration.exclusiveLocking`): no
    /// -shm is made, reads and writes go through the one connection, and what it wrote is
    /// there for a store opened the usual way after it.
    @Test func exclusiveLockingMakesNoSharedMemoryFile() async throws {
        try await withTemporaryDirectory { directory throws in
            let path = directory.databasePath
            try await withStore(at: path) { store throws in try await store.frameworks.insert(Fixtures.framework("a")) }
            var configuration = Store.Configuration()
            configuration.exclusiveLocking = true
            try await withStore(at: path, configuration: configuration) { store throws in
                try await store.frameworks.insert(Fixtures.framework("b"))
                #expect(try await store.frameworks.count() == 2)
                #expect(try await store.read { db in try db.query("PRAGMA locking_mode") { $0.text(0) } } == ["exclusive"])
                #expect(!FileManager.default.fileExists(atPath: path + "-shm"))
            }
            try await withStore(at: path) { store throws in
                #expect(try await store.frameworks.count() == 2)
                #expect(try await store.read { db in try db.query("PRAGMA locking_mode") { $0.text(0) } } == ["normal"])
            }
        }
    }

    @Test func keepsRecordsAcrossReopening() async throws {
        try await withTemporaryDirectory { directory throws in
            let order = Fixtures.order("o-1", prices: ["0.10", "0.20"])
            try await withStore(at: directory.databasePath) { store throws in
                try await store.frameworks.insert(Fixtures.framework("arkit"))
                try await store.orders.insert(order)
            }
            try await withStore(at: directory.databasePath) { store throws in
                #expect(try await store.frameworks.find("arkit") == Fixtures.framework("arkit"))
                #expect(try await store.orders.find("o-1") == order)
            }
        }
    }

    @Test func reportsAFileThatCannotBeCreated() async throws {
        try await withTemporaryDirectory { directory throws in
            let path = directory.file("missing-folder/store.sqlite")
            let error = await #expect(throws: StoreError.self) { _ = try await Store.open(at: path) }
            guard case .cannotOpen(let reportedPath, _) = error else {
                Issue.record("expected cannotOpen, got \(String(describing: error))")
                return
            }
            #expect(reportedPath == path)
        }
    }
}
