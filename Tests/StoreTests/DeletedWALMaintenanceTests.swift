import Foundation
import Testing

@testable import Store

/// A store's -wal and -shm deleted under it (a careless cleanup of "temporary" files) while
/// another process goes on using the store. The store's connections keep the old, unlinked
/// files and their stale WAL index: writes fail then, and the close skips its checkpoint (see
/// `WALFiles`). The maintenance that runs outside a write did not look: storectl's checkpoint
/// before every close copied the store's stale frames over the database file, and `vacuum()`
/// (and `migrate()`, an app's migration pending) committed through the stale index, then
/// checkpointed: the store's old pages were mixed into another process's commits,
/// `integrity_check` ok.
@Suite("Checkpoint, vacuum and migrate of a store whose -wal and -shm were deleted", .timeLimit(.minutes(10)))
struct DeletedWALMaintenanceTests {
    enum Maintenance: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case checkpoint
        case vacuum
        /// An app's migration, pending (the store opened without migrating).
        case migrate

        var testDescription: String { rawValue }

        var configuration: Store.Configuration {
            var configuration = Store.Configuration()
            guard self == .migrate else { return configuration }
            configuration.migrateOnOpen = false
            configuration.appMigrations = AppMigrations(
                namespace: "notes-app",
                migrations: [Migration(version: 1, name: "create_notes", sql: "CREATE TABLE notes (id TEXT PRIMARY KEY)")])
            return configuration
        }

        func run(on store: Store) async throws {
            switch self {
            case .checkpoint: try await store.checkpoint()
            case .vacuum: _ = try await store.vacuum()
            case .migrate: try await store.migrate()
            }
        }
    }

    @Test(
        "it fails naming the -wal, writes nothing, and another process's commit made since stays",
        arguments: Maintenance.allCases)
    func anotherProcessCommitStays(_ maintenance: Maintenance) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            // The schema in the file, not only in a -wal.
            try await withStore(at: path) { try await $0.frameworks.insert(Fixtures.framework("before")) }
            let store = try await Store.open(at: path, configuration: maintenance.configuration)
            // Frames in the store's WAL, not yet in the file.
            try await store.frameworks.insert((1...20).map { Fixtures.framework("a-\($0)") })
            #expect(try await store.frameworks.count() == 21) // a reader connection open too
            #expect(unlink(path + "-wal") == 0)
            #expect(unlink(path + "-shm") == 0)
            // Another process commits; its close checkpoints into the file and deletes its -wal.
            let other = try await ScriptProcess.start(
                python: """
                    import sqlite3, sys
                    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
                    connection.execute("INSERT INTO frameworks VALUES ('other', 'O', 'o', 'https://e.com/o', 'd')")
                    connection.close()
                    print("committed", flush=True)
                    """, [path])
            #expect(other.firstLine == "committed")
            _ = await other.finish()
            let committed = try await Self.contents(of: path)
            #expect(committed.hasSuffix(" ok"), "\(committed)")
            await #expect(throws: StoreError.storeMoved(path: path + "-wal")) { try await maintenance.run(on: store) }
            // What another process reads: the store's stale pages mixed into it (its change log
            // naming records that are not there) before the fix.
            let whileOpen = try await Self.contents(of: path)
            #expect(whileOpen == committed)
            await store.close()
            let afterClose = try await Self.contents(of: path)
            #expect(afterClose == committed)
            let ids = try await withStore(at: path) { store in
                try await store.read { db in
                    try db.fetchAll("SELECT id FROM frameworks ORDER BY id").compactMap { $0[0].textValue }
                }
            }
            #expect(ids == ["before", "other"])
        }
    }

    /// SQLite names the -wal and -shm after the file a symbolic link names; the store looked
    /// for them beside the link, so it never saw them deleted, and wrote through its stale index.
    @Test("a store opened through a symbolic link sees its -wal and -shm deleted: a write fails naming the -wal")
    func deletedThroughALink() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            try await withStore(at: path) { _ in }
            let link = directory.file("link.sqlite")
            #expect(symlink(path, link) == 0)
            let store = try await Store.open(at: link)
            try await store.frameworks.insert(Fixtures.framework("a-1"))
            #expect(unlink(path + "-wal") == 0)
            #expect(unlink(path + "-shm") == 0)
            try await Task.sleep(for: WALFiles.writeCheckInterval + .milliseconds(50))
            await #expect(throws: StoreError.storeMoved(path: path + "-wal")) {
                try await store.frameworks.insert(Fixtures.framework("a-2"))
            }
            await #expect(throws: StoreError.storeMoved(path: path + "-wal")) { try await store.checkpoint() }
            await store.close()
        }
    }

    /// SQLite resolves every link in the path, a linked folder too (macOS's /tmp and /var):
    /// the -wal beside the path as given is the same file, and the error names it so, not by
    /// the resolved path (/private/var/...) the user never typed.
    @Test("a store in a linked folder: a deleted -wal is named as the path spells it")
    func deletedInALinkedFolderNamedAsGiven() async throws {
        try await withTemporaryDirectory { directory in
            let real = try directory.makeDirectory("real")
            let alias = directory.file("alias")
            #expect(symlink(real, alias) == 0)
            let path = alias + "/s.sqlite"
            let store = try await Store.open(at: path)
            try await store.frameworks.insert(Fixtures.framework("a-1"))
            #expect(unlink(path + "-wal") == 0)
            try await Task.sleep(for: WALFiles.writeCheckInterval + .milliseconds(50))
            await #expect(throws: StoreError.storeMoved(path: path + "-wal")) {
                try await store.frameworks.insert(Fixtures.framework("a-2"))
            }
            await store.close()
        }
    }

    /// The database as another process reads it: the SHA-256 of its SQL dump, its change log's
    /// length, and its integrity check.
    static func contents(of path: String) async throws -> String {
        let reader = try await ScriptProcess.start(
            python: """
                import hashlib, sqlite3, sys
                connection = sqlite3.connect(sys.argv[1], isolation_level=None)
                dump = "\\n".join(connection.iterdump())
                logged = connection.execute("SELECT count(*) FROM change_log").fetchone()[0]
                integrity = connection.execute("PRAGMA integrity_check").fetchone()[0]
                connection.close()
                print(hashlib.sha256(dump.encode()).hexdigest(), logged, integrity, flush=True)
                """, [path])
        _ = await reader.finish()
        return reader.firstLine
    }
}
