import Foundation
import Testing

@testable import Store

/// Issue 12, items 1 and 9 at the library level: what storectl relies on to stay thin.
@Suite("Store files and amounts the library refuses")
struct StoreFileTests {
    @Test func aMissingFileIsNotCreatedWhenCreateIfMissingIsFalse() async throws {
        try await withTemporaryDirectory { directory throws in
            var configuration = Store.Configuration()
            configuration.createIfMissing = false
            let path = directory.databasePath
            await #expect(throws: StoreError.storeNotFound(path: path)) {
                try await Store.open(at: path, configuration: configuration)
            }
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    /// SQLite names files beside the store NAME-journal, NAME-wal and NAME-shm: with NAME over
    /// 247 bytes the first did not fit the file system's 255, and the open failed with "unable
    /// to open database file (File name too long)" after the store's file was created, which
    /// the failed command's removal could not remove either (a 0-byte file was left).
    @Test func aNameTooLongForTheJournalIsRefusedCreatingNothing() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file(String(repeating: "s", count: 248))
            do {
                let (store, _) = try await Store.openReportingCreation(at: path)
                await store.close()
                Issue.record("opened")
            } catch let error as StoreError {
                #expect("\(error)".contains("248 bytes"), "\(error)")
                #expect("\(error)".contains("at most 247"), "\(error)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == [])
            // 247 bytes fit.
            let fits = directory.file(String(repeating: "s", count: 247))
            try await withStore(at: fits) { try await $0.frameworks.insert(Fixtures.framework("a")) }
        }
    }

    /// A store that exists needs only its -wal and -shm beside it: renamed to a name of 250
    /// bytes (room for `-wal`, not for `-journal`) it was refused, though SQLite opens it.
    @Test func anExistingStoreWithALongNameOpens() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("s.sqlite")
            try await withStore(at: path) { try await $0.frameworks.insert(Fixtures.framework("a")) }
            let long = directory.file(String(repeating: "s", count: 250))
            try FileManager.default.moveItem(atPath: path, toPath: long)
            try await withStore(at: long) { store in
                try await store.frameworks.insert(Fixtures.framework("b"))
                #expect(try await store.frameworks.count() == 2)
            }
            // 252 bytes leave no room for -wal: refused, naming the -wal.
            let longer = directory.file(String(repeating: "s", count: 252))
            try FileManager.default.moveItem(atPath: long, toPath: longer)
            await #expect(throws: StoreError.self) { try await Store.open(at: longer) }
            do {
                _ = try await Store.open(at: longer)
            } catch {
                #expect("\(error)".contains("-wal and -shm") && "\(error)".contains("at most 251"), "\(error)")
            }
        }
    }

    /// An empty file is there but is no store yet: making it one goes through the -journal
    /// (`PRAGMA journal_mode = WAL`), so a name of 250 bytes is refused as a new store's is,
    /// not passed on to SQLite's "unable to open database file (File name too long)".
    @Test func anEmptyFileWithALongNameIsRefusedAsANewStore() async throws {
        try await withTemporaryDirectory { directory in
            let long = directory.file(String(repeating: "e", count: 250))
            #expect(FileManager.default.createFile(atPath: long, contents: Data()))
            do {
                let store = try await Store.open(at: long)
                await store.close()
                Issue.record("an empty file with a 250-byte name opened")
            } catch {
                #expect("\(error)".contains("-journal, -wal and -shm") && "\(error)".contains("at most 247"), "\(error)")
            }
        }
    }

    /// SQLite names the -journal, -wal and -shm after the file a symbolic link names: a link
    /// with a long name to a store with a short one was refused, though SQLite opens it.
    @Test func aLongNamedLinkToAShortNamedStoreOpens() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("s.sqlite")
            try await withStore(at: path) { try await $0.frameworks.insert(Fixtures.framework("a")) }
            let link = directory.file(String(repeating: "l", count: 250))
            try #require(symlink("s.sqlite", link) == 0)
            let store = try await Store.open(at: link)
            #expect(try await store.frameworks.count() == 1)
            await store.close()
        }
    }

    @Test func aNewStoreCarriesTheApplicationIDAndAForeignOneIsRefusedUnchanged() async throws {
        try await withTemporaryDirectory { directory throws in
            try await withStore(at: directory.databasePath) { store throws in
                let id = try await store.read { try $0.fetchOne("PRAGMA application_id")?[0].integerValue }
                #expect(id == Int64(StoreFile.applicationID))
            }
            // Another application's database, made with a plain connection.
            let other = directory.file("other.sqlite")
            do {
                let database = try Database(path: other, options: .init())
                try database.executeScript("CREATE TABLE frameworks (name TEXT); INSERT INTO frameworks VALUES ('mine')")
            }
            let before = try Data(contentsOf: URL(fileURLWithPath: other))
            await #expect(throws: StoreError.self) { try await Store.open(at: other) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: other)) == before)
            #expect(!FileManager.default.fileExists(atPath: other + "-wal"))
        }
    }

    @Test func amountsOutOfBoundsThrowInsteadOfTrapping() async throws {
        let huge = Order(
            id: "c5", placedAt: Date(),
            items: [
                OrderItem(itemName: "Milk", price: Money(minorUnits: 90_000_000_000_000_000), aisle: 3, quantity: 2)
            ])
        #expect(throws: StoreError.self) { try huge.total }
        let many = Order(
            id: "c6", placedAt: Date(),
            items: Array(repeating: OrderItem(itemName: "A", price: Money.maximum, aisle: 1), count: 2))
        #expect(throws: StoreError.self) { try many.total }
        #expect(Money(minorUnits: .max).adding(Money(minorUnits: 1)) == nil)
        #expect(Money(minorUnits: .max).multiplied(by: 2) == nil)
        try await withTemporaryStore { store, _ throws in
            await #expect(throws: StoreError.self) { try await store.orders.insert(huge) }
            await #expect(throws: StoreError.self) { try await store.orders.insert(many) }
            #expect(try await store.orders.count() == 0)
        }
    }
}
