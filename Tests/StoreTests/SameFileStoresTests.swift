import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// Two stores of one process on one file. `fcntl` locks belong to the process, and closing any
/// descriptor of a file drops all of the process's locks on it: a descriptor the library opens
/// itself (the header check of every open, the close of a replaced store) must not be closed
/// under another store's connections, nor the -wal and -shm unlinked from under a store that
/// is opening the path (see `OpenDatabaseFiles`).
@Suite("Stores of one process on one file", .timeLimit(.minutes(10)))
struct SameFileStoresTests {
    typealias Replaced = ReplacedStoreTests

    /// The second open's header check closed its descriptor of the file, and with it the first
    /// store's SHARED lock on it: another process's close then took EXCLUSIVE, checkpointed and
    /// deleted the -wal and -shm under the open stores (whose next write failed, "moved").
    @Test("a second store opened on the file leaves the first its locks: another process's close deletes no -wal or -shm")
    func secondOpenKeepsTheFirstStoresLocks() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let first = try await Store.open(at: path)
            try await first.frameworks.insert(Fixtures.framework("a-1"))
            #expect(try await first.frameworks.count() == 1) // a reader connection open too
            let second = try await Store.open(at: path)
            #expect(try await second.frameworks.count() == 1)
            // Another process opens and closes the database: the last close would checkpoint and
            // delete the -wal and -shm (it takes EXCLUSIVE on the database file first).
            let outcome = try await ProcessRunner.run("/usr/bin/sqlite3", [path, "PRAGMA journal_mode"])
            #expect(outcome.succeeded, "\(outcome)")
            #expect(outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "wal")
            #expect(Replaced.exists(path + "-wal"))
            #expect(Replaced.exists(path + "-shm"))
            try await first.frameworks.insert(Fixtures.framework("a-2"))
            #expect(try await first.frameworks.count() == 2)
            #expect(try await second.frameworks.count() == 2)
            #expect(try await first.read { try $0.fetchOne("PRAGMA integrity_check")?[0].textValue } == "ok")
            await second.close()
            await first.close()
            let contents = try await Replaced.contents(of: path)
            #expect(contents.frameworks == ["a-1", "a-2"])
            #expect(contents.integrity == "ok")
        }
    }

    /// Each open beside a long-lived store parked the descriptor of its header check: a store
    /// opened and closed over and over kept one descriptor per open until the long-lived one
    /// closed. The parked one is read again instead.
    @Test("stores opened and closed over and over beside a long-lived one park one descriptor, not one per open")
    func repeatedOpensParkOneDescriptor() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let longLived = try await Store.open(at: path)
            for _ in 0..<20 {
                let store = try await Store.open(at: path)
                #expect(try await store.frameworks.count() == 0)
                await store.close()
            }
            #expect(OpenDatabaseFiles.parkedCount(path: path) <= 1)
            await longLived.close()
            #expect(OpenDatabaseFiles.parkedCount(path: path) == 0)
        }
    }

    /// The new store's writer had the restored file and the old -wal and -shm open before it
    /// registered them (`WALFiles`, at the end of its open): the replaced store's close took
    /// its locks through descriptors of its own (no conflict within a process), unlinked the
    /// -wal and -shm, and closed the descriptors, dropping the new store's locks.
    @Test("a replaced store closed while another store of the process opens its path leaves the -wal and -shm to it")
    func replacedStoreClosedWhileAnotherOpens() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let backup = directory.file("backup.sqlite")
            _ = try await Replaced.makeBackup(at: backup)
            let old = try await Store.open(at: path)
            try await old.frameworks.insert(Fixtures.framework("a-1"))
            try Replaced.Restore.rename.put(backup, at: path)
            let (entered, release) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
            var configuration = Store.Configuration()
            configuration.willFinishOpening = {
                entered.signal()
                _ = release.wait(timeout: .now() + 240)
            }
            let opening = Task { [configuration] in try await Store.open(at: path, configuration: configuration) }
            #expect(await wait(for: entered))
            let left = await old.closeReportingLeftFiles()
            release.signal()
            let store = try await opening.value
            #expect(left == [path + "-wal", path + "-shm"])
            #expect(Replaced.exists(path + "-wal"))
            #expect(Replaced.exists(path + "-shm"))
            try await store.frameworks.insert(Fixtures.framework("b-2"))
            #expect(try await store.frameworks.fetchAll().map(\.id).contains("b-2"))
            #expect(try await store.read { try $0.fetchOne("PRAGMA integrity_check")?[0].textValue } == "ok")
            #expect(Replaced.exists(path + "-wal"))
            #expect(Replaced.exists(path + "-shm"))
            #expect(await store.closeReportingLeftFiles() == [])
            let contents = try await Replaced.contents(of: path)
            #expect(contents.frameworks.contains("b-2"))
            #expect(contents.integrity == "ok")
        }
    }

    /// Paths that lead to one file, spelled differently, for the stores opening them: a `..`
    /// after a link to a folder (the kernel takes it after the folder the link names:
    /// `dir/link/../s.sqlite` is `real/s.sqlite`, and as text it was `dir/s.sqlite`), and a
    /// hard link. `spelled(directory, path)`: another path to the file at `path`, made if need be.
    enum Spelling: String, CaseIterable, CustomTestStringConvertible {
        case dotDotAfterLinkedFolder
        case hardLink

        var testDescription: String { rawValue }

        /// The folder stores are opened in, `real`, with `sub` in it; `dir/link` names `sub`.
        static func folders(in directory: TemporaryDirectory) throws -> (real: String, dir: String) {
            let real = try directory.makeDirectory("real")
            _ = try directory.makeDirectory("real/sub")
            let dir = try directory.makeDirectory("dir")
            try #require(symlink(real + "/sub", dir + "/link") == 0)
            return (real, dir)
        }

        /// Another path to `real/name` (for a hard link, made: `real/name` must exist).
        func other(to name: String, real: String, dir: String) throws -> String {
            switch self {
            case .dotDotAfterLinkedFolder:
                return dir + "/link/../" + name
            case .hardLink:
                let other = real + "/hard-" + name
                try #require(link(real + "/" + name, other) == 0)
                return other
            }
        }
    }

    /// The registry matched paths being opened as text: a store opening the file by another
    /// path was not seen, and a path naming another file was. (Foundation resolves a `..`
    /// through the real folder only in a path that exists: here the file does not yet, as for
    /// a store being created.)
    @Test("a store opening a file by another path is seen opening it, whichever path is asked", arguments: Spelling.allCases)
    func openingIsSeenByAnyPath(_ spelling: Spelling) async throws {
        try await withTemporaryDirectory { directory in
            let (real, dir) = try Spelling.folders(in: directory)
            let path = real + "/s.sqlite"
            if spelling == .hardLink { await (try await Store.open(at: path)).close() }
            let other = try spelling.other(to: "s.sqlite", real: real, dir: dir)
            let opening = OpenDatabaseFiles(opening: other)
            #expect(OpenDatabaseFiles.whileLocked { $0.isInUse(path: path, identity: nil) })
            // `dir/s.sqlite`, which `dir/link/../s.sqlite` is as text: another file.
            #expect(!OpenDatabaseFiles.whileLocked { $0.isInUse(path: dir + "/s.sqlite", identity: nil) })
            opening.release()
            #expect(!OpenDatabaseFiles.whileLocked { $0.isInUse(path: path, identity: nil) })
        }
    }

    /// A store of this process starting to open the restored file by another path, as the
    /// replaced store closes: the close did not see it, and removed the -wal and -shm the
    /// opener was about to use. (The registry compared paths as text: Foundation resolves a
    /// `..` through the real folder only in a path that exists, so `dir/link/../s.sqlite` was
    /// missed when the opener started during a restore by `rm` and `cp`; a hard link always.)
    @Test(
        "a replaced store closed while another store starts opening its path by another spelling leaves the -wal and -shm",
        arguments: Spelling.allCases)
    func replacedStoreClosedWhileAnotherOpensByAnotherPath(_ spelling: Spelling) async throws {
        try await withTemporaryDirectory { directory in
            let (real, dir) = try Spelling.folders(in: directory)
            let path = real + "/s.sqlite"
            let backup = directory.file("backup.sqlite")
            _ = try await Replaced.makeBackup(at: backup)
            let old = try await Store.open(at: path)
            try await old.frameworks.insert(Fixtures.framework("a-1"))
            // What `Store.open(at: other)` registers first, before it opens anything.
            let opening: OpenDatabaseFiles
            switch spelling {
            case .dotDotAfterLinkedFolder:
                // `rm store.sqlite`, the other store starts opening it, `cp backup store.sqlite`.
                #expect(unlink(path) == 0)
                opening = OpenDatabaseFiles(opening: try spelling.other(to: "s.sqlite", real: real, dir: dir))
                try FileManager.default.copyItem(atPath: backup, toPath: path)
            case .hardLink:
                try Replaced.Restore.rename.put(backup, at: path)
                opening = OpenDatabaseFiles(opening: try spelling.other(to: "s.sqlite", real: real, dir: dir))
            }
            let left = await old.closeReportingLeftFiles()
            opening.release()
            #expect(left == [path + "-wal", path + "-shm"])
            #expect(Replaced.exists(path + "-wal"))
            #expect(Replaced.exists(path + "-shm"))
        }
    }

    /// The second open's header check, by another path to the file, keeps the first store's
    /// locks too (its descriptor is parked by the file's identity).
    @Test(
        "a second store opened by a `..` after a linked folder leaves the first its locks",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func secondOpenByAnotherPathKeepsTheFirstStoresLocks() async throws {
        try await withTemporaryDirectory { directory in
            let (real, dir) = try Spelling.folders(in: directory)
            let path = real + "/s.sqlite"
            let first = try await Store.open(at: path)
            try await first.frameworks.insert(Fixtures.framework("a-1"))
            #expect(try await first.frameworks.count() == 1)
            let second = try await Store.open(
                at: try Spelling.dotDotAfterLinkedFolder.other(to: "s.sqlite", real: real, dir: dir))
            #expect(try await second.frameworks.count() == 1)
            let outcome = try await ProcessRunner.run("/usr/bin/sqlite3", [path, "PRAGMA journal_mode"])
            #expect(outcome.succeeded, "\(outcome)")
            #expect(Replaced.exists(path + "-wal"))
            #expect(Replaced.exists(path + "-shm"))
            try await second.frameworks.insert(Fixtures.framework("a-2"))
            #expect(try await first.frameworks.count() == 2)
            await second.close()
            await first.close()
            let contents = try await Replaced.contents(of: path)
            #expect(contents.frameworks == ["a-1", "a-2"])
            #expect(contents.integrity == "ok")
        }
    }

    /// No connection checkpoints as it closes once its file has moved, and the close removed
    /// the -wal that held the last commits: the renamed file lacked them.
    @Test("a store renamed away (mv store store.old) and then closed: store.old holds its last commits")
    func renamedAwayKeepsItsCommits() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            let moved = path + ".old"
            let store = try await Store.open(at: path)
            try await store.frameworks.insert(Fixtures.framework("a-1"))
            try await store.frameworks.insert(Fixtures.framework("a-2"))
            #expect(Foundation.rename(path, moved) == 0)
            #expect(await store.closeReportingLeftFiles() == [])
            #expect(!Replaced.exists(path + "-wal"))
            #expect(!Replaced.exists(path + "-shm"))
            #expect(!Replaced.exists(moved + "-wal"))
            let contents = try await Replaced.contents(of: moved)
            #expect(contents.frameworks == ["a-1", "a-2"])
            #expect(contents.integrity == "ok")
        }
    }
}
