import Foundation
import Testing

@testable import Store

/// A backup restored over a store that a `Store` has open (`mv backup store.sqlite`, or `rm`
/// then `cp`). SQLite's close leaves the old file's -wal and -shm at the path when the database
/// file has moved, and the next opener of the path read the old file's committed frames into
/// the restored one: the backup's identity and frameworks, the old file's records,
/// `integrity_check` ok.
@Suite("A store replaced under an open Store", .timeLimit(.minutes(10)))
struct ReplacedStoreTests {
    enum Restore: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `mv backup store.sqlite`.
        case rename
        /// `rm store.sqlite; cp backup store.sqlite`: the -wal and -shm stay.
        case removeThenCopy

        var testDescription: String { rawValue }

        /// Puts a copy of `backup` at `path`, this way.
        func put(_ backup: String, at path: String) throws {
            let copy = path + ".restoring"
            try FileManager.default.copyItem(atPath: backup, toPath: copy)
            switch self {
            case .rename:
                #expect(Foundation.rename(copy, path) == 0)
            case .removeThenCopy:
                #expect(unlink(path) == 0)
                #expect(Foundation.rename(copy, path) == 0)
            }
        }
    }

    /// A closed store at `path` (no -wal beside it) holding the framework `b-1`; its bytes.
    static func makeBackup(at path: String) async throws -> Data {
        try await withStore(at: path) { try await $0.frameworks.insert(Fixtures.framework("b-1")) }
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// What a fresh store opened on `path` reads: its identity and its frameworks' ids.
    static func contents(of path: String) async throws -> (identity: String?, frameworks: [String], integrity: String?) {
        try await withStore(at: path) { store in
            try await store.read { db in
                (
                    try db.fetchOne("SELECT id FROM store_identity")?[0].textValue,
                    try db.fetchAll("SELECT id FROM frameworks ORDER BY id").compactMap { $0[0].textValue },
                    try db.fetchOne("PRAGMA integrity_check")?[0].textValue
                )
            }
        }
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    @Test(
        "a write after the store's file was replaced fails naming it, and the close removes the old -wal and -shm: the path reads as the backup",
        arguments: Restore.allCases)
    func writeFailsAndCloseRemovesTheOldWAL(_ restore: Restore) async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let backup = directory.file("backup.sqlite")
            let backupBytes = try await Self.makeBackup(at: backup)
            let expected = try await Self.contents(of: backup)
            let store = try await Store.open(at: path)
            try await store.frameworks.insert(Fixtures.framework("a-1"))
            #expect(try await store.frameworks.count() == 1) // a reader connection open too
            try restore.put(backup, at: path)
            // A write looks at most every `writeCheckInterval`.
            try await Task.sleep(for: WALFiles.writeCheckInterval + .milliseconds(50))
            await #expect(throws: StoreError.storeMoved(path: path)) {
                try await store.frameworks.insert(Fixtures.framework("a-2"))
            }
            #expect(
                StoreError.storeMoved(path: path).description.contains(
                    "the store \(path) was replaced or removed while this process had it open; nothing was written"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == backupBytes)
            await store.close()
            // They held a-1 (and the old file's schema): the next opener replayed them into the backup.
            #expect(!Self.exists(path + "-wal"))
            #expect(!Self.exists(path + "-shm"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == backupBytes)
            let restored = try await Self.contents(of: path)
            #expect(restored.frameworks == ["b-1"])
            #expect(restored.identity == expected.identity)
            #expect(restored.integrity == "ok")
        }
    }

    /// The files are removed only if no other process has them open: one that does (here a
    /// Python sqlite3 connection that read the old store) uses them through its WAL index,
    /// and `fcntl` locks are per process, so only the -shm's dead-man switch tells.
    @Test("another process with the old store open: the close leaves the -wal and -shm, and says which")
    func leftWhileAnotherProcessHasThem() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let backup = directory.file("backup.sqlite")
            _ = try await Self.makeBackup(at: backup)
            let store = try await Store.open(at: path)
            try await store.frameworks.insert(Fixtures.framework("a-1"))
            let holder = try await ScriptProcess.start(
                python: """
                    import sqlite3, sys
                    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
                    connection.execute("SELECT count(*) FROM frameworks").fetchall()
                    print("open", flush=True)
                    sys.stdin.read()
                    """, [path])
            #expect(holder.firstLine == "open")
            try Restore.rename.put(backup, at: path)
            let left = await store.closeReportingLeftFiles()
            #expect(left == [path + "-wal", path + "-shm"])
            #expect(Self.exists(path + "-wal"))
            #expect(Self.exists(path + "-shm"))
            _ = await holder.finish()
        }
    }

    /// The store opened through a symbolic link, and the link (not the file it names) replaced
    /// by a backup: the -wal and -shm beside the file the link named are still that file's,
    /// which another process has open. Neither removed nor reported as left (the warning told
    /// the user to remove a live database's -wal).
    @Test("a store opened through a link, the link replaced: the -wal and -shm of the file it named are its, left unreported")
    func linkReplacedLeavesTheFilesWAL() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let backup = directory.file("backup.sqlite")
            _ = try await Self.makeBackup(at: backup)
            try await withStore(at: path) { try await $0.frameworks.insert(Fixtures.framework("a-1")) }
            let link = directory.file("link.sqlite")
            #expect(symlink(path, link) == 0)
            let store = try await Store.open(at: link)
            try await store.frameworks.insert(Fixtures.framework("a-2"))
            let holder = try await ScriptProcess.start(
                python: """
                    import sqlite3, sys
                    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
                    connection.execute("SELECT count(*) FROM frameworks").fetchall()
                    print("open", flush=True)
                    sys.stdin.read()
                    """, [path])
            #expect(holder.firstLine == "open")
            try Restore.rename.put(backup, at: link)
            #expect(await store.closeReportingLeftFiles() == [])
            #expect(Self.exists(path + "-wal"))
            #expect(Self.exists(path + "-shm"))
            _ = await holder.finish()
            #expect(try await Self.contents(of: path).frameworks == ["a-1", "a-2"])
            #expect(try await Self.contents(of: link).frameworks == ["b-1"])
        }
    }

    /// `fcntl` locks belong to the process: the dead-man switch cannot see another store of
    /// this process with the same -shm open, whose connections would lose their locks when the
    /// lock's descriptor closed, and their files under them.
    @Test("two stores of one process on the replaced file: the first close leaves the files to the second, which removes them")
    func twoStoresInOneProcess() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let backup = directory.file("backup.sqlite")
            let backupBytes = try await Self.makeBackup(at: backup)
            let first = try await Store.open(at: path)
            let second = try await Store.open(at: path)
            try await first.frameworks.insert(Fixtures.framework("a-1"))
            #expect(try await second.frameworks.count() == 1)
            try Restore.rename.put(backup, at: path)
            #expect(await first.closeReportingLeftFiles() == [])
            #expect(Self.exists(path + "-wal"))
            #expect(Self.exists(path + "-shm"))
            #expect(try await second.frameworks.count() == 1) // its connections still work
            #expect(await second.closeReportingLeftFiles() == [])
            #expect(!Self.exists(path + "-wal"))
            #expect(!Self.exists(path + "-shm"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == backupBytes)
            #expect(try await Self.contents(of: path).frameworks == ["b-1"])
        }
    }

    /// A reader connection opened after the replacement opened the new file with the old
    /// file's -wal and -shm: it read a mix of the two, and its close (the new file's last)
    /// checkpointed the old frames into the new file for good.
    @Test("a read that opens a connection after the store's file was replaced fails naming it, and the new file stays as it was")
    func newReaderAfterTheReplacement() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let backup = directory.file("backup.sqlite")
            let backupBytes = try await Self.makeBackup(at: backup)
            let store = try await Store.open(at: path)
            try await store.frameworks.insert(Fixtures.framework("a-1"))
            // One read holds the reader connection it has (to the old file), so the next opens one.
            let (entered, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            let holding = Task {
                try await store.read { _ in
                    entered.signal()
                    _ = release.wait(timeout: .now() + 240)
                }
            }
            #expect(await wait(for: entered))
            try Restore.rename.put(backup, at: path)
            await #expect(throws: StoreError.storeMoved(path: path)) { try await store.frameworks.count() }
            release.signal()
            try await holding.value
            await store.close()
            #expect(!Self.exists(path + "-wal"))
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == backupBytes)
            #expect(try await Self.contents(of: path).frameworks == ["b-1"])
        }
    }

    @Test(
        "a store closed without being replaced removes nothing itself, and one removed without a replacement leaves no -wal or -shm"
    )
    func notReplacedOrRemoved() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let store = try await Store.open(at: path)
            try await store.frameworks.insert(Fixtures.framework("a-1"))
            #expect(await store.closeReportingLeftFiles() == [])
            #expect(try await Self.contents(of: path).frameworks == ["a-1"])

            let removed = try await Store.open(at: path)
            try await removed.frameworks.insert(Fixtures.framework("a-2"))
            #expect(unlink(path) == 0)
            #expect(await removed.closeReportingLeftFiles() == [])
            #expect(!Self.exists(path + "-wal"))
            #expect(!Self.exists(path + "-shm"))
            // A new store at the path starts empty (it read the old -wal's frames).
            #expect(try await Self.contents(of: path).frameworks == [])
        }
    }
}
