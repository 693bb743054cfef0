import Foundation
import Testing

@testable import Store

/// Opening a new file while another connection holds its write lock (another process migrating
/// it): past the busy timeout, `StoreError.writeLockTimeout`, as for any write, not SQLite's
/// "database is locked".
@Suite("Migrating a file another connection holds locked")
struct MigrationWriteLockTests {
    @Test("the lock taken before or after the file is in WAL mode", arguments: [true, false])
    func lockedNewFile(wal: Bool) async throws {
        try await withTemporaryDirectory { directory throws in
            let path = directory.databasePath
            let holder = try Database(path: path, options: .init())
            if wal { try holder.executeScript("PRAGMA journal_mode = WAL") }
            try holder.executeScript("BEGIN IMMEDIATE")
            var configuration = Store.Configuration()
            configuration.busyTimeout = .milliseconds(300)
            await #expect(throws: StoreError.writeLockTimeout(path: path, waited: .milliseconds(300))) {
                try await Store.open(at: path, configuration: configuration)
            }
            try holder.executeScript("ROLLBACK")
            let store = try await Store.open(at: path, configuration: configuration)
            #expect(try await store.pendingMigrations().isEmpty)
            await store.close()
        }
    }
}
