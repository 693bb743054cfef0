import Foundation
import Testing

@testable import Store

@Suite("Migrations")
struct MigrationTests {
    /// A well-formed migration this build does not embed, numbered after the last embedded one.
    private static let tagsMigration = Migration(
        version: Migration.embedded.count + 1, name: "create_tags", sql: "CREATE TABLE tags (name TEXT PRIMARY KEY);\n")

    private struct Recorded: Equatable {
        let version: Int64
        let name: String
        let checksum: String
        let appliedAt: String
    }

    private func recorded(_ store: Store) async throws -> [Recorded] {
        try await store.read { db in
            try db.fetchAll("SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version").map {
                Recorded(
                    version: $0[0].integerValue ?? -1, name: $0[1].textValue ?? "",
                    checksum: $0[2].textValue ?? "", appliedAt: $0[3].textValue ?? "")
            }
        }
    }

    private func tableExists(_ name: String, in store: Store) async throws -> Bool {
        try await store.read { db in
            try db.fetchOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]) != nil
        }
    }

    private func configuration(
        clock: Date, migrations: [Migration] = Migration.embedded, migrateOnOpen: Bool = true
    ) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.clock = .fixed(clock)
        configuration.migrations = migrations
        configuration.migrateOnOpen = migrateOnOpen
        return configuration
    }

    /// Changes the database behind the migrator's back, through an ordinary write, and closes it.
    private func tamper(with path: String, _ sql: String) async throws {
        try await withStore(at: path) { store in try await store.write { try $0.execute(sql) } }
    }

    /// The bytes of the database file and whatever WAL it has.
    private func contents(of path: String) -> [Data?] {
        [path, path + "-wal"].map { FileManager.default.contents(atPath: $0) }
    }

    @Test func embedsEveryFileOfTheMigrationsFolderExactly() throws {
        let folder = Fixtures.packageRoot.appendingPathComponent("Migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }.sorted()
        try #require(!files.isEmpty)
        #expect(Migration.embedded.map { $0.identifier + ".sql" } == files)
        #expect(Migration.embedded.map(\.version) == Array(1...files.count))
        for (migration, file) in zip(Migration.embedded, files) {
            let bytes = try #require(FileManager.default.contents(atPath: folder.appendingPathComponent(file).path))
            #expect(migration.sql == String(decoding: bytes, as: UTF8.self))
            #expect(migration.checksum == SHA256.hexDigest(of: bytes), "\(file)")
        }
    }

    @Test func freshStoreRecordsEveryMigrationWithItsChecksumAndTime() async throws {
        let appliedAt = Fixtures.time("2026-03-01T12:00:00Z")
        try await withTemporaryStore(configuration: configuration(clock: appliedAt)) { store, _ throws in
            let expected = Migration.embedded.map {
                Recorded(
                    version: Int64($0.version), name: $0.name, checksum: SHA256.hexDigest(of: Array($0.sql.utf8)),
                    appliedAt: Timestamp.format(appliedAt))
            }
            #expect(try await recorded(store) == expected)
            let status = try await store.migrationStatus()
            #expect(status.map(\.state) == Array(repeating: .applied, count: Migration.embedded.count))
            #expect(status.allSatisfy { $0.appliedAt == appliedAt })
            for table in ["frameworks", "orders", "order_items", "events", "images"] {
                #expect(try await tableExists(table, in: store), "\(table)")
            }
        }
    }

    @Test func reopeningAppliesNothing() async throws {
        try await withTemporaryDirectory { directory throws in
            let first = Fixtures.time("2026-03-01T12:00:00Z")
            let path = directory.databasePath
            let before = try await withStore(at: path, configuration: configuration(clock: first)) { store throws in
                try await store.frameworks.insert(Fixtures.framework("kept"))
                return try await recorded(store)
            }
            let later = Fixtures.time("2026-04-01T12:00:00Z")
            try await withStore(at: path, configuration: configuration(clock: later)) { store throws in
                #expect(try await recorded(store) == before)
                #expect(try await store.migrate() == [])
                #expect(try await recorded(store) == before)
                #expect(try await store.frameworks.find("kept") != nil)
            }
        }
    }

    @Test func appliesOnlyTheNewMigrationsToAnOlderDatabase() async throws {
        try await withTemporaryDirectory { directory throws in
            let first = Fixtures.time("2026-03-01T12:00:00Z")
            try await withStore(at: directory.databasePath, configuration: configuration(clock: first)) { _ in }
            let tags = Self.tagsMigration
            let later = Fixtures.time("2026-04-01T12:00:00Z")
            let settings = configuration(clock: later, migrations: Migration.embedded + [tags])
            try await withStore(at: directory.databasePath, configuration: settings) { store throws in
                let rows = try await recorded(store)
                #expect(rows.map(\.version) == (Migration.embedded + [tags]).map { Int64($0.version) })
                #expect(rows.dropLast().allSatisfy { $0.appliedAt == Timestamp.format(first) })
                #expect(
                    rows.last
                        == Recorded(
                            version: Int64(tags.version), name: "create_tags", checksum: tags.checksum,
                            appliedAt: Timestamp.format(later)))
                #expect(try await tableExists("tags", in: store))
            }
        }
    }

    /// Migrations 0007 (a cheaper CHECK), 0008 (sources by integer id) and 0013 (rows by stream:
    /// source and kind) rebuild sync's tables: what sync received before must survive them all,
    /// so tombstones and three-way decisions still see records as synced, and each source keeps
    /// its validators.
    @Test func rebuildingSyncTablesKeepsWhatSyncReceived() async throws {
        try await withTemporaryDirectory { directory throws in
            let time = Fixtures.time("2026-03-01T12:00:00Z")
            let feed = directory.url.appendingPathComponent("feed.json")
            let other = directory.url.appendingPathComponent("other.json")
            func write(_ text: String, to file: URL) throws { try Data(text.utf8).write(to: file) }
            let oldRowsSQL = "SELECT source || '|' || kind || '|' || key || '|' || hash FROM sync_records ORDER BY 1"
            let rowsSQL = """
                SELECT s.source || '|' || t.kind || '|' || r.key || '|' || r.hash
                FROM sync_records AS r JOIN sync_streams AS t ON t.id = r.stream JOIN sync_sources AS s ON s.id = t.source_id
                ORDER BY 1
                """
            let sourcesSQL = "SELECT source || '|' || coalesce(last_synced_at, '') FROM sync_sources ORDER BY 1"
            let tableSQL = "SELECT sql FROM sqlite_master WHERE name = 'sync_records'"
            let old = try #require(Migration.embedded.firstIndex { $0.name == "rebuild_sync_records_check" })
            // What a sync by a build from before both migrations left behind, written as it wrote it.
            let (rows, sources) = try await withStore(
                at: directory.databasePath,
                configuration: configuration(clock: time, migrations: Array(Migration.embedded[..<old]))
            ) { store throws in
                let frameworks = ["a", "b", "c", "d"].map {
                    Framework(id: $0, name: "N", imageName: "i", urlString: "u", description: "d")
                }
                try await store.frameworks.insert(frameworks)
                try await store.write { db in
                    for (source, keys) in [
                        (FeedSource.file(feed).key, ["a", "b", "c"]), (FeedSource.file(other).key, ["c", "d"]),
                    ] {
                        try db.execute(
                            "INSERT INTO sync_sources (source, last_synced_at) VALUES (?, '2026-02-01T00:00:00Z')",
                            [.text(source)])
                        for key in keys {
                            let hash = Int64(bitPattern: RecordHash.of(frameworks.first { $0.id == key }!))
                            try db.execute(
                                "INSERT INTO sync_records (source, kind, key, hash) VALUES (?, 'framework', ?, ?)",
                                [.text(source), .text(key), .integer(hash)])
                        }
                    }
                }
                #expect(try await store.read { try $0.query(tableSQL) { $0.text(0) } }.first?.contains("IN (") == true)
                return (
                    try await store.read { try $0.query(oldRowsSQL) { $0.text(0) } },
                    try await store.read { try $0.query(sourcesSQL) { $0.text(0) } }
                )
            }
            #expect(rows.count == 5 && sources.count == 2)
            try await withStore(at: directory.databasePath, configuration: configuration(clock: time)) { store throws in
                #expect(try await store.read { try $0.query(rowsSQL) { $0.text(0) } } == rows)
                #expect(try await store.read { try $0.query(sourcesSQL) { $0.text(0) } } == sources)
                let table = try await store.read { try $0.query(tableSQL) { $0.text(0) } }.first ?? ""
                #expect(!table.contains("IN (") && table.contains("stream INTEGER"), "\(table)")
                // The kind rule still holds (0012 opened it to app kinds: any name but the empty
                // one; 0013 moved it to sync_streams), and so do sync_streams' foreign key and both
                // primary keys (sync_records has a trigger instead of a foreign key: see 0013).
                await #expect(throws: SQLiteError.self) {
                    try await store.write {
                        try $0.execute("INSERT INTO sync_streams (source_id, kind) SELECT id, '' FROM sync_sources")
                    }
                }
                await #expect(throws: SQLiteError.self) {
                    try await store.write {
                        try $0.execute("INSERT INTO sync_streams (source_id, kind) VALUES (999, 'framework')")
                    }
                }
                await #expect(throws: SQLiteError.self) {
                    try await store.write {
                        try $0.execute("INSERT INTO sync_streams (source_id, kind) SELECT source_id, kind FROM sync_streams")
                    }
                }
                await #expect(throws: SQLiteError.self) {
                    try await store.write {
                        try $0.execute("INSERT INTO sync_records SELECT stream, key, 0 FROM sync_records LIMIT 1")
                    }
                }
                // A tombstone deletes a record unchanged since it was received before the rebuild.
                try write(#"{"version": 1, "deleted": {"frameworks": ["a"]}}"#, to: feed)
                let report = try await store.sync(from: .file(feed))
                #expect(report.frameworks.deleted == 1)
                #expect(try await store.frameworks.find("a") == nil)
                // Forgetting a source forgets what was received from it, and only that (its streams
                // by their foreign key, their rows by the trigger).
                try await store.write { try $0.execute("DELETE FROM sync_sources WHERE source LIKE '%other.json'") }
                #expect(try await store.read { try $0.query("SELECT count(*) FROM sync_records") { $0.int(0) } } == [2])
                #expect(try await store.read { try $0.query("SELECT count(*) FROM sync_streams") { $0.int(0) } } == [1])
            }
        }
    }

    @Test func refusesDatabaseWhoseMigrationWasEdited() async throws {
        try await withTemporaryDirectory { directory throws in
            let path = directory.databasePath
            try await withStore(at: path) { _ in }
            let edited = String(repeating: "0", count: 64)
            try await tamper(with: path, "UPDATE schema_migrations SET checksum = '\(edited)' WHERE version = 2")
            let before = contents(of: path)
            let orders = Migration.embedded[1]
            let refusal = StoreError.migrationModified(migration: orders.identifier, recorded: edited, expected: orders.checksum)
            await #expect(throws: refusal) {
                _ = try await Store.open(at: path)
            }
            #expect(contents(of: path) == before)
        }
    }

    @Test func refusesDatabaseFromTheFuture() async throws {
        try await withTemporaryDirectory { directory throws in
            let path = directory.databasePath
            try await withStore(at: path) { _ in }
            try await tamper(
                with: path,
                """
                INSERT INTO schema_migrations (version, name, checksum, applied_at)
                VALUES (999, 'from_the_future', '\(String(repeating: "f", count: 64))', '2030-01-01T00:00:00Z')
                """)
            let before = contents(of: path)
            await #expect(throws: StoreError.databaseFromFuture(unknownMigrations: ["0999_from_the_future"])) {
                _ = try await Store.open(at: path)
            }
            #expect(contents(of: path) == before)
        }
    }

    @Test func failingMigrationLeavesTheDatabaseAtThePreviousVersion() async throws {
        try await withTemporaryDirectory { directory throws in
            let path = directory.databasePath
            let next = Migration.embedded.count + 1
            let broken = Migration(version: next, name: "broken", sql: "CREATE TABLE x(a); SELECT nonsense FROM nowhere;")
            var failing = Store.Configuration()
            failing.migrations = Migration.embedded + [broken]
            let error = await #expect(throws: StoreError.self) { _ = try await Store.open(at: path, configuration: failing) }
            guard case .migrationFailed(let migration, let underlying) = error else {
                Issue.record("expected migrationFailed, got \(String(describing: error))")
                return
            }
            #expect(migration == String(format: "%04d_broken", next))
            #expect(underlying.message.contains("nowhere"))

            try await withStore(at: path) { store throws in
                #expect(try await recorded(store).map(\.version) == Migration.embedded.map { Int64($0.version) })
                #expect(try await !tableExists("x", in: store))
                let states = try await store.migrationStatus().map(\.state)
                #expect(states == Array(repeating: .applied, count: Migration.embedded.count))
            }
        }
    }

    @Test func leavesMigrationsPendingUntilMigrateWhenAskedNotToMigrateOnOpen() async throws {
        let appliedAt = Fixtures.time("2026-05-05T05:05:05Z")
        try await withTemporaryStore(configuration: configuration(clock: appliedAt, migrateOnOpen: false)) { store, _ throws in
            let pending = try await store.migrationStatus()
            #expect(
                pending
                    == Migration.embedded.map {
                        MigrationStatus(
                            version: $0.version, name: $0.name, state: .pending, checksum: $0.checksum, appliedAt: nil)
                    })
            #expect(try await !tableExists("frameworks", in: store))

            #expect(try await store.migrate() == Migration.embedded)
            #expect(try await store.migrationStatus().map(\.state) == Array(repeating: .applied, count: Migration.embedded.count))
            try await store.frameworks.insert(Fixtures.framework("arkit"))
            #expect(try await store.frameworks.count() == 1)
            #expect(try await store.migrate() == [])
        }
    }

    @Test func reportsAppliedPendingModifiedAndUnknownMigrations() async throws {
        try await withTemporaryDirectory { directory throws in
            let path = directory.databasePath
            let appliedAt = Fixtures.time("2026-03-01T12:00:00Z")
            try await withStore(at: path, configuration: configuration(clock: appliedAt)) { _ in }

            let tags = Self.tagsMigration
            let settings = configuration(clock: appliedAt, migrations: Migration.embedded + [tags], migrateOnOpen: false)
            try await withStore(at: path, configuration: settings) { store throws in
                let edited = String(repeating: "e", count: 64)
                try await store.write { db in
                    try db.execute("UPDATE schema_migrations SET checksum = ? WHERE version = 3", [.text(edited)])
                    try db.execute(
                        """
                        INSERT INTO schema_migrations (version, name, checksum, applied_at)
                        VALUES (999, 'from_the_future', 'abc', '2030-01-01T00:00:00Z')
                        """)
                }
                let status = try await store.migrationStatus()
                try #require(status.count == Migration.embedded.count + 2)
                #expect(status.map(\.version) == Migration.embedded.map(\.version) + [tags.version, 999])
                let expectedStates: [MigrationStatus.State] =
                    Migration.embedded.map { $0.version == 3 ? .modified : .applied } + [.pending, .unknown]
                #expect(status.map(\.state) == expectedStates)
                #expect(status[2].checksum == edited)
                #expect(status[2].appliedAt == appliedAt)
                #expect(
                    status[0]
                        == MigrationStatus(
                            version: 1, name: Migration.embedded[0].name, state: .applied,
                            checksum: Migration.embedded[0].checksum, appliedAt: appliedAt))
                #expect(
                    status[status.count - 2]
                        == MigrationStatus(
                            version: tags.version, name: "create_tags", state: .pending, checksum: tags.checksum, appliedAt: nil))
                #expect(
                    status[status.count - 1]
                        == MigrationStatus(
                            version: 999, name: "from_the_future", state: .unknown, checksum: "abc",
                            appliedAt: Fixtures.time("2030-01-01T00:00:00Z")))
                // Nothing is applied on top of a database it cannot trust.
                await #expect(throws: StoreError.self) { try await store.migrate() }
                #expect(try await !tableExists("tags", in: store))
            }
        }
    }

    @Test func twoStoresOpeningOneNewFileAtOnceApplyEachMigrationOnce() async throws {
        try await withTemporaryDirectory { directory throws in
            let path = directory.databasePath
            async let first = outcome { try await Store.open(at: path) }
            async let second = outcome { try await Store.open(at: path) }
            let opened = await [first, second]
            for case .success(let store) in opened { await store.close() }
            for case .failure(let error) in opened { Issue.record(error) }
            try await withStore(at: path) { store throws in
                #expect(try await recorded(store).map(\.version) == Migration.embedded.map { Int64($0.version) })
            }
        }
    }
}
