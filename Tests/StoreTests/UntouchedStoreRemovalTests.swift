import Foundation
import Testing

@testable import Store

/// A command that created a store and failed removes it, but never once another connection has
/// it open or anything else was written to it (another command's confirmed write).
@Suite("Removing a store a failed command created")
struct UntouchedStoreRemovalTests {
    @Test func anUntouchedStoreNobodyHasOpenIsRemoved() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("new.sqlite")
            let (store, created) = try await Store.openReportingCreation(at: path)
            let identity = try #require(created)
            await store.close()
            #expect(Store.removeUntouched(at: path, created: identity))
            for suffix in ["", "-wal", "-shm", "-journal"] { #expect(!FileManager.default.fileExists(atPath: path + suffix)) }
        }
    }

    /// The command runs on after creating the store (a sync waits on its feed): the path may
    /// name another file by the time it fails, renamed over it meanwhile. Another application's
    /// database whose tables were empty was deleted then (the failed sync said "the store is
    /// unchanged"), and one with rows was switched from its rollback journal to WAL.
    @Test(
        "another application's database renamed over the new store stays, byte for byte: with empty tables, or with rows",
        arguments: [false, true])
    func anotherApplicationsDatabaseRenamedOverItStays(withRows: Bool) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("new.sqlite")
            let (store, created) = try await Store.openReportingCreation(at: path)
            let identity = try #require(created)
            await store.close()
            let other = directory.file("app.sqlite")
            let database = try Database(path: other, options: .init())
            try database.executeScript("CREATE TABLE contacts (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE settings (k, v)")
            if withRows { try database.executeScript("INSERT INTO contacts (name) VALUES ('Ada')") }
            database.close()
            let bytes = try Data(contentsOf: URL(fileURLWithPath: other))
            #expect(rename(other, path) == 0)
            #expect(!Store.removeUntouched(at: path, created: identity))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)
        }
    }

    /// A store holding only bookkeeping (a fresh one, one a failed sync left its history in)
    /// looks untouched too: renamed over the new store while the command ran, it was deleted,
    /// though it was not the file the command created.
    @Test("another store renamed over the new store while the command ran stays: only the file created is removed")
    func anotherStoreRenamedOverItStays() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("new.sqlite")
            let (store, created) = try await Store.openReportingCreation(at: path)
            let identity = try #require(created)
            await store.close()
            let other = directory.file("other.sqlite")
            let (otherStore, otherCreated) = try await Store.openReportingCreation(at: other)
            #expect(otherCreated != nil)
            let otherIdentity = try #require(FileIdentity(of: other))
            await otherStore.close()
            #expect(rename(other, path) == 0)
            #expect(FileIdentity(of: path) == otherIdentity)
            #expect(!Store.removeUntouched(at: path, created: identity))
            #expect(FileIdentity(of: path) == otherIdentity, "the other store was removed")
            let reopened = try await Store.open(at: path)
            #expect(try await reopened.read { try $0.fetchOne("PRAGMA journal_mode")?[0].textValue } == "wal")
            await reopened.close()
        }
    }

    @Test func aStoreAnotherConnectionHasOpenOrWroteToStays() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.file("new.sqlite")
            let (first, created) = try await Store.openReportingCreation(at: path)
            let (second, alsoCreated) = try await Store.openReportingCreation(at: path)
            let identity = try #require(created)
            #expect(alsoCreated == nil, "exactly one opener created it")
            await first.close()
            // Open elsewhere (another command between its open and its write): kept, still WAL.
            #expect(!Store.removeUntouched(at: path, created: identity))
            #expect(try await second.read { try $0.fetchOne("PRAGMA journal_mode")?[0].textValue } == "wal")
            // Written to, and closed: kept with the write.
            try await second.frameworks.insert(Fixtures.framework("confirmed"))
            await second.close()
            #expect(!Store.removeUntouched(at: path, created: identity))
            let reopened = try await Store.open(at: path)
            #expect(try await reopened.frameworks.find("confirmed") != nil)
            #expect(try await reopened.read { try $0.fetchOne("PRAGMA journal_mode")?[0].textValue } == "wal")
            await reopened.close()
        }
    }
}
