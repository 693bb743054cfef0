import Foundation
import Testing

@testable import Store

/// A test kind with a REAL column, whose `feedValue` writes the number's text as Swift prints it
/// (`inf` for infinity, which is no JSON), and whose `decode` may return nil without a word.
struct Reading: StoreRecord, Equatable {
    var id: String
    var value: Double

    static let kind = RecordKind(rawValue: "reading")
    static let table = "readings"
    static let columns = ["id", "value"]

    var key: String { id }
    var columnValues: [SQLValue] { [.text(id), .real(value)] }

    init(id: String, value: Double) {
        self.id = id
        self.value = value
    }

    init(columnValues values: [SQLValue]) throws {
        let value: Double
        switch values[1] {
        case .real(let real): value = real
        case .integer(let integer): value = Double(integer)
        default: value = .nan
        }
        self.init(id: values[0].textValue ?? "", value: value)
    }

    static func decode(_ fields: inout FeedFields) -> Reading? {
        let id = fields.string("id")
        guard case .number(let text)? = fields.member("value"), let value = Double(text) else { return nil }
        guard let id else { return nil }
        return Reading(id: id, value: value)
    }

    var feedValue: JSONValue { .object(["id": .string(id), "value": .number("\(value)")]) }

    static var configuration: Store.Configuration {
        var configuration = Store.Configuration()
        configuration.recordTypes = [Reading.self]
        configuration.appMigrations = AppMigrations(
            namespace: "readings-app",
            migrations: [
                Migration(
                    version: 1, name: "create_readings", sql: "CREATE TABLE readings (id TEXT PRIMARY KEY NOT NULL, value REAL)")
            ])
        return configuration
    }
}

/// A test kind whose `feedValue` is as large as its `count` says: an array of that many zeros.
struct Series: StoreRecord, Equatable {
    var id: String
    var count: Int

    static let kind = RecordKind(rawValue: "series")
    static let table = "series"
    static let columns = ["id", "count"]

    var key: String { id }
    var columnValues: [SQLValue] { [.text(id), .integer(Int64(count))] }

    init(id: String, count: Int) {
        self.id = id
        self.count = count
    }

    init(columnValues values: [SQLValue]) throws {
        self.init(id: values[0].textValue ?? "", count: Int(values[1].integerValue ?? 0))
    }

    static func decode(_ fields: inout FeedFields) -> Series? {
        guard let id = fields.string("id"), case .array(let points)? = fields.member("points") else { return nil }
        return Series(id: id, count: points.count)
    }

    var feedValue: JSONValue { .object(["id": .string(id), "points": .array(Array(repeating: .integer(0), count: count))]) }

    static var configuration: Store.Configuration {
        var configuration = Store.Configuration()
        configuration.recordTypes = [Series.self]
        configuration.appMigrations = AppMigrations(
            namespace: "series-app",
            migrations: [
                Migration(
                    version: 1, name: "create_series",
                    sql: "CREATE TABLE series (id TEXT PRIMARY KEY NOT NULL, count INTEGER NOT NULL)")
            ])
        return configuration
    }
}

/// From the review of app kinds: a kind's table as its migration spelled it, names that collide
/// in a feed, values SQLite changes as it stores them, what an app's `decode` and `feedValue`
/// may return, and migrations that try to end the migrator's transaction.
@Suite("An app's kind: its table, its names, its values")
struct AppKindSchemaTests {
    /// `text` as the feed at `directory/feed.json`: one source, whatever it holds.
    private static func feed(_ text: String, in directory: TemporaryDirectory) throws -> FeedSource {
        let path = directory.file("feed.json")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return try FeedSource(path)
    }

    private static func openError(_ configuration: Store.Configuration, in directory: TemporaryDirectory) async -> String? {
        do {
            let store = try await Store.open(at: directory.file("\(UUID().uuidString).sqlite"), configuration: configuration)
            await store.close()
            return nil
        } catch {
            return String(describing: error)
        }
    }

    @Test("a table or key column spelled in capitals by the migration is observed all the same")
    func capitalizedNames() async throws {
        for sql in [
            "CREATE TABLE Notes (id TEXT PRIMARY KEY NOT NULL, text TEXT NOT NULL, pinned INTEGER NOT NULL, due TEXT NOT NULL)",
            "CREATE TABLE notes (ID TEXT PRIMARY KEY NOT NULL, Text TEXT NOT NULL, pinned INTEGER NOT NULL, DUE TEXT NOT NULL)",
        ] {
            try await withTemporaryStore(configuration: Note.configuration(creatingTableWith: sql)) { store, _ in
                let changes = StreamProbe(store.changes(of: [Note.kind]))
                #expect(await eventually { store.observerCount == 1 })
                let note = Note(id: "n", text: "t", pinned: false, due: CalendarDate("2026-11-24")!)
                try await store.write { try $0.records(Note.self).insert(note) }
                try await store.write { db in
                    var updated = note
                    updated.text = "u"
                    try db.records(Note.self).update(updated)
                }
                try await store.write { _ = try $0.records(Note.self).delete("n") }
                var seen: [Change.Operation] = []
                for _ in 0..<3 { seen += try await changes.next().changes.map(\.operation) }
                #expect(seen == [.insert, .update, .delete], "\(sql)")
            }
        }
    }

    @Test("a table that cannot hold its kind is refused when the store opens, naming what is wrong")
    func tablesThatCannotHoldTheKind() async throws {
        try await withTemporaryDirectory { directory in
            let cases: [(sql: String, says: String)] = [
                ("CREATE TABLE other (id TEXT PRIMARY KEY)", "does not exist"),
                ("CREATE TABLE notes (id TEXT PRIMARY KEY NOT NULL, text TEXT, pinned INTEGER)", "no column 'due'"),
                ("CREATE TABLE notes (id TEXT NOT NULL, text TEXT, pinned INTEGER, due TEXT)", "unique on its own"),
                (
                    "CREATE TABLE notes (id TEXT, text TEXT, pinned INTEGER, due TEXT, PRIMARY KEY (id, text))",
                    "unique on its own"
                ),
                ("CREATE TABLE notes (id TEXT, text TEXT, pinned INTEGER, due TEXT, UNIQUE (text, id))", "unique on its own"),
                ("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT, pinned INTEGER, due TEXT)", "the rowid"),
                ("CREATE TABLE notes (id TEXT PRIMARY KEY COLLATE NOCASE, text TEXT, pinned INTEGER, due TEXT)", "NOCASE"),
                ("CREATE TABLE notes (id TEXT UNIQUE COLLATE NOCASE, text TEXT, pinned INTEGER, due TEXT)", "NOCASE"),
            ]
            for (sql, says) in cases {
                let error = await Self.openError(Note.configuration(creatingTableWith: sql), in: directory)
                #expect(error?.contains(says) == true && error?.contains("kind 'note'") == true, "\(sql): \(error ?? "opened")")
            }
            // Accepted, as earlier releases accepted them: WITHOUT ROWID, STRICT, quoted names, an
            // untyped key, a UNIQUE key that is not the primary key, a unique index made after,
            // another declared type (UUID: numeric affinity).
            for sql in [
                "CREATE TABLE notes (id TEXT PRIMARY KEY, text TEXT, pinned INTEGER, due TEXT) WITHOUT ROWID",
                #"CREATE TABLE "notes" ("id" TEXT PRIMARY KEY NOT NULL, text TEXT, pinned INTEGER, due TEXT) STRICT"#,
                "CREATE TABLE notes (id PRIMARY KEY, text, pinned, due)",
                "CREATE TABLE notes (id TEXT NOT NULL UNIQUE, text TEXT, pinned INTEGER, due TEXT)",
                "CREATE TABLE notes (id TEXT NOT NULL, text TEXT, pinned INTEGER, due TEXT); CREATE UNIQUE INDEX notes_id ON notes (id)",
                "CREATE TABLE notes (id UUID PRIMARY KEY, text TEXT, pinned INTEGER, due TEXT)",
            ] {
                let error = await Self.openError(Note.configuration(creatingTableWith: sql), in: directory)
                #expect(error == nil, "\(sql): \(error ?? "")")
            }
        }
    }

    @Test("a kind named as another kind's plural is refused: every feed's deleted member would fail")
    func pluralCollisions() async throws {
        struct Tag: StoreRecord {
            var id: String
            static let kind = RecordKind(rawValue: "tag")
            static let table = "tag_table"
            static let columns = ["id"]
            var key: String { id }
            var columnValues: [SQLValue] { [.text(id)] }
            init(id: String) { self.id = id }
            init(columnValues values: [SQLValue]) throws { id = values[0].textValue ?? "" }
            static func decode(_ fields: inout FeedFields) -> Tag? { fields.string("id").map(Tag.init) }
            var feedValue: JSONValue { .object(["id": .string(id)]) }
        }
        struct Tags: StoreRecord {
            var id: String
            static let kind = RecordKind(rawValue: "tags")
            static let table = "tags_table"
            static let columns = ["id"]
            var key: String { id }
            var columnValues: [SQLValue] { [.text(id)] }
            init(id: String) { self.id = id }
            init(columnValues values: [SQLValue]) throws { id = values[0].textValue ?? "" }
            static func decode(_ fields: inout FeedFields) -> Tags? { fields.string("id").map(Tags.init) }
            var feedValue: JSONValue { .object(["id": .string(id)]) }
        }
        struct Frameworks: StoreRecord {
            var id: String
            static let kind = RecordKind(rawValue: "frameworks")
            static let table = "fw2"
            static let columns = ["id"]
            var key: String { id }
            var columnValues: [SQLValue] { [.text(id)] }
            init(id: String) { self.id = id }
            init(columnValues values: [SQLValue]) throws { id = values[0].textValue ?? "" }
            static func decode(_ fields: inout FeedFields) -> Frameworks? { fields.string("id").map(Frameworks.init) }
            var feedValue: JSONValue { .object(["id": .string(id)]) }
        }
        #expect(RecordTypeCheck.problem([Tag.self, Tags.self])?.contains("'tags' is named as another kind's plural") == true)
        #expect(RecordTypeCheck.problem([Frameworks.self])?.contains("'frameworks'") == true)
        #expect(RecordTypeCheck.problem([Tag.self]) == nil)
    }

    @Test("-0.0 and NaN, which SQLite stores as 0 and NULL, leave a synced record unchanged locally")
    func valuesSQLiteChanges() async throws {
        try await withTemporaryStore(configuration: Reading.configuration) { store, directory in
            let first = try Self.feed(
                #"{"version": 1, "readings": [{"id": "z", "value": -0.0}, {"id": "y", "value": 1.5}]}"#, in: directory)
            _ = try await store.sync(from: first)
            // Keep-existing deletes a tombstoned record only if it is as received: z was kept as
            // "changed locally" because its hash was of -0.0, its row of 0.
            let second = try Self.feed(#"{"version": 1, "deleted": {"readings": ["z", "y"]}}"#, in: directory)
            let report = try await store.sync(from: second)
            #expect(report.appKinds[Reading.kind]?.deleted == 2, "\(report)")
            #expect(try await store.read { try $0.records(Reading.self).count() } == 0)
        }
    }

    @Test("a decode that returns nil naming no field fails the sync, naming the record")
    func decodeThatSaysNothing() async throws {
        try await withTemporaryStore(configuration: Reading.configuration) { store, directory in
            let feed = try Self.feed(
                #"{"version": 1, "readings": [{"id": "a", "value": 1}, {"id": "b", "value": "x"}]}"#, in: directory)
            await #expect {
                _ = try await store.sync(from: feed)
            } throws: { error in
                String(describing: error).contains("readings[1]") && String(describing: error).contains("named no field")
            }
            #expect(try await store.read { try $0.records(Reading.self).count() } == 0)
        }
    }

    @Test("columnValues that do not match the kind's columns fail a sync and a write, naming the record; nothing is kept")
    func columnValuesOfTheWrongLength() async throws {
        struct Short: StoreRecord {
            var id: String
            static let kind = RecordKind(rawValue: "short")
            static let table = "shorts"
            static let columns = ["id", "a", "b"]
            var key: String { id }
            var columnValues: [SQLValue] { [.text(id), .text("only two")] }
            init(id: String) { self.id = id }
            init(columnValues values: [SQLValue]) throws { id = values[0].textValue ?? "" }
            static func decode(_ fields: inout FeedFields) -> Short? { fields.string("id").map(Short.init) }
            var feedValue: JSONValue { .object(["id": .string(id)]) }
        }
        var configuration = Store.Configuration()
        configuration.recordTypes = [Short.self]
        configuration.appMigrations = AppMigrations(
            namespace: "shorts-app",
            migrations: [Migration(version: 1, name: "create", sql: "CREATE TABLE shorts (id TEXT PRIMARY KEY, a, b)")])
        try await withTemporaryStore(configuration: configuration) { store, directory in
            let feed = try Self.feed(#"{"version": 1, "shorts": [{"id": "s1"}]}"#, in: directory)
            // It trapped the writer (a precondition): the whole process ended.
            for attempt in 0..<2 {
                await #expect {
                    if attempt == 0 {
                        _ = try await store.sync(from: feed)
                    } else {
                        try await store.write { try $0.records(Short.self).insert(Short(id: "s2")) }
                    }
                } throws: { error in
                    let text = String(describing: error)
                    return text.contains("short 's") && text.contains("columnValues") && text.contains("2 values")
                }
            }
            #expect(try await store.read { try $0.records(Short.self).count() } == 0)
        }
    }

    @Test("a feedValue with a number that is no JSON fails an export and a publish, naming the record; nothing is written")
    func invalidNumbers() async throws {
        try await withTemporaryStore(configuration: Reading.configuration) { store, directory in
            try await store.write { try $0.records(Reading.self).insert(Reading(id: "r", value: .infinity)) }
            await #expect {
                _ = try await store.exportFeed()
            } throws: { error in
                String(describing: error).contains("reading 'r'") && String(describing: error).contains("'inf'")
            }
            // The folders the failed publish created are removed again; one that was there stays.
            let parent = directory.url.appendingPathComponent("new", isDirectory: true)
            let folder = parent.appendingPathComponent("public", isDirectory: true)
            await #expect(throws: StoreError.self) { _ = try await store.publish(to: folder) }
            #expect(!FileManager.default.fileExists(atPath: parent.path))
            let existing = directory.url.appendingPathComponent("existing", isDirectory: true)
            try FileManager.default.createDirectory(at: existing, withIntermediateDirectories: false)
            await #expect(throws: StoreError.self) { _ = try await store.publish(to: existing) }
            #expect(try FileManager.default.contentsOfDirectory(atPath: existing.path) == [])
            #expect(JSONValue.isJSONNumber("-0.5e+3") && JSONValue.isJSONNumber("0") && JSONValue.isJSONNumber("10"))
            for text in ["inf", "nan", "1.", ".5", "+1", "01", "0x10", "1e", "-", ""] {
                #expect(!JSONValue.isJSONNumber(text), "\(text)")
            }
        }
    }

    @Test("a feedValue of more JSON values than a feed record may hold fails an export and a publish, naming the record")
    func tooManyValues() async throws {
        try await withTemporaryStore(configuration: Series.configuration) { store, directory in
            // The id, the array and its numbers: 1,000,000 values, as many as a record may hold.
            try await store.write { try $0.records(Series.self).insert(Series(id: "at", count: 999_998)) }
            // ... and a client reads it back.
            let exported = try Feed.decode(Data(try await store.exportFeed().utf8), recordTypes: [Series.self])
            #expect(exported.appRecords.compactMap { ($0 as? Series)?.count } == [999_998])
            try await store.write { try $0.records(Series.self).insert(Series(id: "over", count: 999_999)) }
            await #expect {
                _ = try await store.exportFeed()
            } throws: { error in
                String(describing: error).contains("series 'over'")
                    && String(describing: error).contains("more than 1000000 JSON values")
            }
            let folder = directory.url.appendingPathComponent("public", isDirectory: true)
            await #expect(throws: StoreError.self) { _ = try await store.publish(to: folder) }
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("manifest.json").path))
        }
        #expect(JSONValue.array([.integer(1), .object(["a": .array([])])]).innerValueCount(upTo: 10) == 3)
        #expect(JSONValue.array(Array(repeating: .null, count: 50)).innerValueCount(upTo: 10) == 10)
    }

    @Test("a migration that commits, rolls back or begins is refused whole, and the store opens again")
    func migrationsMayNotEndTheTransaction() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            for sql in [
                "CREATE TABLE a (x); COMMIT; CREATE TABLE b (x); INSERT INTO no_such_table VALUES (1);",
                "CREATE TABLE a (x); ROLLBACK;",
                "BEGIN; CREATE TABLE a (x); COMMIT;",
                "CREATE TABLE a (x); RELEASE migration; CREATE TABLE b (x);",
            ] {
                var configuration = Store.Configuration()
                configuration.appMigrations = AppMigrations(
                    namespace: "app", migrations: [Migration(version: 1, name: "two_tables", sql: sql)])
                await #expect {
                    _ = try await Store.open(at: path, configuration: configuration)
                } throws: { error in
                    String(describing: error).contains("app/0001_two_tables")
                }
                let store = try await Store.open(at: path)
                let tables = try await store.read {
                    try $0.query("SELECT name FROM sqlite_master WHERE name IN ('a', 'b')") { $0.text(0) }
                }
                await store.close()
                #expect(tables.isEmpty, "\(sql): \(tables)")
            }
        }
    }

    @Test("an app's namespace and versions are checked as documented")
    func appMigrationNames() async throws {
        try await withTemporaryDirectory { directory in
            for (namespace, version) in [("", 1), ("Upper", 1), ("app/0001_create_a", 1), ("app", 0), ("app", -1)] {
                var configuration = Store.Configuration()
                configuration.appMigrations = AppMigrations(
                    namespace: namespace, migrations: [Migration(version: version, name: "m", sql: "CREATE TABLE m (x)")])
                let error = await Self.openError(configuration, in: directory)
                #expect(error?.contains("appMigrations") == true, "\(namespace) \(version): \(error ?? "opened")")
            }
        }
    }
}

/// From the review of app kinds: an app migration that wrote the library's bookkeeping.
@Suite("An app's migration and the library's tables")
struct AppMigrationLibraryTablesTests {
    @Test("may read them and seed records, but not write, drop or alter the store's own bookkeeping")
    func bookkeepingIsRefused() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            for sql in [
                "DELETE FROM schema_migrations WHERE version > 10",
                "DROP TABLE change_log",
                "UPDATE store_identity SET id = 'x'",
                "ALTER TABLE sync_sources ADD COLUMN x",
                "DROP TABLE frameworks",
                "ALTER TABLE Frameworks RENAME TO fw",
                "UPDATE image_cache_totals SET bytes = 0",
                "DROP TRIGGER image_cache_totals_after_insert",
            ] {
                var configuration = Store.Configuration()
                configuration.appMigrations = AppMigrations(
                    namespace: "app", migrations: [Migration(version: 1, name: "meddle", sql: sql)])
                await #expect {
                    _ = try await Store.open(at: path, configuration: configuration)
                } throws: { error in
                    String(describing: error).contains("may not write, drop or alter the store's own table")
                }
                // And the store opens as it was.
                let store = try await Store.open(at: path)
                #expect(try await store.migrationStatus().allSatisfy { $0.state != .pending }, "\(sql)")
                await store.close()
            }
            var seeding = Store.Configuration()
            seeding.appMigrations = AppMigrations(
                namespace: "app",
                migrations: [
                    Migration(
                        version: 1, name: "seed",
                        sql: """
                            CREATE TABLE app_copy AS SELECT id FROM frameworks;
                            INSERT INTO frameworks (id, name, image_name, url_string, description)
                                VALUES ('seed', 'Seed', 's', 'https://s', 'd');
                            INSERT INTO images (url, data, content_type, size, stored_at, last_access_at)
                                VALUES ('https://s/seed.png', x'0102', NULL, 2, 0, 0);
                            """)
                ])
            let store = try await Store.open(at: path, configuration: seeding)
            #expect(try await store.frameworks.find("seed") != nil)
            // The seeded image moved the cache's totals (the library's trigger may write them).
            #expect(
                try await store.images.stats()
                    == ImageCacheStats(count: 1, totalBytes: 2, budgetBytes: Store.Configuration.defaultImageCacheBudget))
            #expect(
                try await store.read { db in
                    try db.query("SELECT entries, bytes FROM image_cache_totals") { [$0.int(0), $0.int(1)] }
                } == [[1, 2]])
            await store.close()
        }
    }
}
