import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// Two stores of one process on one file. `fcntl` locks belong to the process, and closing any
/// descriptor of a file drops all of the process's locks on it: a descriptor the library opens
/// itself (the header check of every open, the close of a replaced store) must not be closed
/// under another store's connections, nor the -wal and -shm unlinked from under a store that
/// is opening the path (see `OpenDatabaseFiles`).
@Suite("Stores of one process on one file", .timeLimit(.minutes(5)))
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
}
