import Foundation
import Testing

@testable import Store

/// A fifth kind defined here, outside the library: registered through `Store.Configuration`,
/// its table made by its own app migration.
struct Note: StoreRecord, Equatable {
    var id: String
    var text: String
    var pinned: Bool
    var due: CalendarDate

    static let kind = RecordKind(rawValue: "note")
    static let table = "notes"
    static let columns = ["id", "text", "pinned", "due"]

    var key: String { id }
    var columnValues: [SQLValue] { [.text(id), .text(text), .integer(pinned ? 1 : 0), .text(due.description)] }

    init(id: String, text: String, pinned: Bool, due: CalendarDate) {
        self.id = id
        self.text = text
        self.pinned = pinned
        self.due = due
    }

    init(columnValues values: [SQLValue]) throws {
        guard let due = values[3].textValue.flatMap(CalendarDate.init) else {
            throw StoreError.invalidRecord(kind: Self.kind, key: values[0].textValue ?? "", field: "due", reason: "not a date")
        }
        self.init(id: values[0].textValue ?? "", text: values[1].textValue ?? "", pinned: values[2].integerValue == 1, due: due)
    }

    static func decode(_ fields: inout FeedFields) -> Note? {
        let id = fields.string("id")
        let text = fields.string("text")
        let pinned = fields.bool("pinned")
        let due = fields.calendarDate("due")
        if let text, text.isEmpty { fields.problem("text", "must not be empty") }
        guard let id, let text, !text.isEmpty, let pinned, let due else { return nil }
        return Note(id: id, text: text, pinned: pinned, due: due)
    }

    var feedValue: JSONValue {
        .object(["id": .string(id), "text": .string(text), "pinned": .bool(pinned), "due": .string(due.description)])
    }

    static let migrations = AppMigrations(
        namespace: "notes-app",
        migrations: [
            Migration(
                version: 1, name: "create_notes",
                sql: """
                    CREATE TABLE notes (
                        id     TEXT PRIMARY KEY NOT NULL,
                        text   TEXT NOT NULL,
                        pinned INTEGER NOT NULL,
                        due    TEXT NOT NULL
                    ) STRICT;
                    """)
        ])

    static var configuration: Store.Configuration {
        var configuration = Store.Configuration()
        configuration.recordTypes = [Note.self]
        configuration.appMigrations = migrations
        return configuration
    }

    /// `configuration`, with the notes table made by `sql` instead: for tests of other shapes.
    static func configuration(creatingTableWith sql: String) -> Store.Configuration {
        var configuration = configuration
        configuration.appMigrations = AppMigrations(
            namespace: migrations.namespace, migrations: [Migration(version: 1, name: "create_notes", sql: sql)])
        return configuration
    }
}

@Suite("An app's own record kind")
struct AppKindTests {
    static func feed(notes: [String], deleted: [String] = []) -> String {
        """
        {"version": 1,
         "frameworks": [{"id": "arkit", "name": "ARKit", "imageName": "arkit", "urlString": "https://developer.apple.com/arkit", "description": "AR"}],
         "notes": [\(notes.joined(separator: ", "))],
         "deleted": {"notes": [\(deleted.map { "\"\($0)\"" }.joined(separator: ", "))]}}
        """
    }

    static func note(_ id: String, _ text: String = "Buy milk", pinned: Bool = false, due: String = "2026-11-24") -> String {
        #"{"id": "\#(id)", "text": "\#(text)", "pinned": \#(pinned), "due": "\#(due)"}"#
    }

    private func sync(
        _ store: Store, _ text: String, in directory: TemporaryDirectory,
        policy: SyncPolicy = .preferRemote, dryRun: Bool = false
    ) async throws -> SyncReport {
        let path = directory.url.appendingPathComponent("feed.json").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        var options = SyncOptions()
        options.policy = policy
        options.dryRun = dryRun
        options.force = true
        return try await store.sync(from: FeedSource(path), options: options)
    }

    @Test func syncsCountsAndUpdatesAppRecordsBesideBuiltInOnes() async throws {
        try await withTemporaryStore(configuration: Note.configuration) { store, directory in
            var report = try await sync(store, Self.feed(notes: [Self.note("b"), Self.note("a", pinned: true)]), in: directory)
            #expect(report.appKinds[Note.kind]?.inserted == 2)
            #expect(report[Note.kind] == report.appKinds[Note.kind] && report[.framework] == report.frameworks)
            #expect(report[RecordKind(rawValue: "untouched")] == SyncReport.Counts())
            #expect(report.frameworks.inserted == 1)
            #expect(
                try await store.read { try $0.records(Note.self).fetchAll() } == [
                    Note(id: "a", text: "Buy milk", pinned: true, due: CalendarDate("2026-11-24")!),
                    Note(id: "b", text: "Buy milk", pinned: false, due: CalendarDate("2026-11-24")!),
                ])
            #expect(report.jsonValue["notes"]?["inserted"] == .number("2"))

            report = try await sync(
                store, Self.feed(notes: [Self.note("b", "Buy bread"), Self.note("a", pinned: true)]), in: directory)
            #expect(report.appKinds[Note.kind]?.updated == 1)
            #expect(report.appKinds[Note.kind]?.unchanged == 1)
            #expect(try await store.read { try $0.records(Note.self).find("b")?.text } == "Buy bread")

            report = try await sync(store, Self.feed(notes: [Self.note("a", pinned: true)], deleted: ["b"]), in: directory)
            #expect(report.appKinds[Note.kind]?.deleted == 1)
            #expect(try await store.read { try $0.records(Note.self).count() } == 1)
        }
    }

    @Test func dryRunCountsAppRecordsAndWritesNothing() async throws {
        try await withTemporaryStore(configuration: Note.configuration) { store, directory in
            let report = try await sync(store, Self.feed(notes: [Self.note("a")]), in: directory, dryRun: true)
            #expect(report.appKinds[Note.kind]?.inserted == 1)
            #expect(try await store.read { try $0.records(Note.self).count() } == 0)
        }
    }

    @Test func anInvalidAppRecordIsNamedByItsJSONPathAndChangesNothing() async throws {
        try await withTemporaryStore(configuration: Note.configuration) { store, directory in
            _ = try await sync(store, Self.feed(notes: [Self.note("a")]), in: directory)
            let before = try await store.exportFeed()
            let bad = Self.feed(notes: [
                Self.note("z"), Self.note("y", due: "2026-02-30"),
                #"{"id": "x", "text": 3, "pinned": "no", "due": "2026-01-01"}"#, Self.note("z"),
            ])
            let error = await #expect(throws: FeedValidationError.self) { try await sync(store, bad, in: directory) }
            #expect(error?.problems.map(\.path) == ["notes[1].due", "notes[2].text", "notes[2].pinned", "notes[3].id"])
            #expect(error?.problems.first?.message.contains("'2026-02-30' is not a calendar date") == true)
            #expect(error?.problems.last?.message.contains("notes[0].id") == true)
            #expect(try await store.exportFeed() == before)
        }
    }

    @Test func exportsAppRecordsAndReadsThemBack() async throws {
        try await withTemporaryStore(configuration: Note.configuration) { store, directory in
            _ = try await sync(store, Self.feed(notes: [Self.note("b"), Self.note("a", "Call", pinned: true)]), in: directory)
            let text = try await store.exportFeed()
            let feed = try Feed.decode(Data(text.utf8), recordTypes: [Note.self])
            #expect(feed.appRecords.compactMap { $0 as? Note }.map(\.id) == ["a", "b"])
            #expect(feed.frameworks.map(\.id) == ["arkit"])
            // Without the kind registered the array is an unknown member, ignored.
            #expect(try Feed.decode(Data(text.utf8)).appRecords.isEmpty)
        }
    }

    /// Publishing goes through the same kinds as sync: an app's records are in the snapshot and
    /// in the change segments, and a store syncing the published folder receives them, deletes
    /// included.
    @Test func publishesAppRecordsInSnapshotsAndSegments() async throws {
        try await withTemporaryStore(configuration: Note.configuration) { source, directory in
            _ = try await sync(source, Self.feed(notes: [Self.note("b"), Self.note("a", "Call", pinned: true)]), in: directory)
            let folder = directory.url.appendingPathComponent("published", isDirectory: true)
            let first = try await source.publish(to: folder)
            #expect(first.outcome == .snapshot)
            let replica = try await Store.open(at: directory.file("replica.sqlite"), configuration: Note.configuration)
            let manifest = try FeedSource(folder.appendingPathComponent(PublishedManifest.fileName).path)
            var options = SyncOptions()
            options.policy = .preferRemote
            var report = try await replica.sync(from: manifest, options: options)
            #expect(report.appKinds[Note.kind]?.inserted == 2)
            #expect(report[Note.kind] == report.appKinds[Note.kind] && report[.framework] == report.frameworks)
            #expect(report[RecordKind(rawValue: "untouched")] == SyncReport.Counts())
            #expect(report.frameworks.inserted == 1)
            #expect(
                try await replica.read { try $0.records(Note.self).fetchAll() }
                    == source.read { try $0.records(Note.self).fetchAll() })

            try await source.write { db in
                try db.records(Note.self).update(
                    Note(id: "a", text: "Call back", pinned: false, due: CalendarDate("2026-12-01")!))
                _ = try db.records(Note.self).delete("b")
            }
            let second = try await source.publish(to: folder)
            // A store this small also gets a new snapshot; the change is in a segment all the same.
            #expect(second.filesWritten.contains { $0.hasPrefix("segment-") })
            #expect(second.changes == 2)
            report = try await replica.sync(from: manifest, options: options)
            #expect(report.published?.fullSyncReason == nil)
            #expect(report.appKinds[Note.kind]?.updated == 1)
            #expect(report.appKinds[Note.kind]?.deleted == 1)
            #expect(
                try await replica.read { try $0.records(Note.self).fetchAll() } == [
                    Note(id: "a", text: "Call back", pinned: false, due: CalendarDate("2026-12-01")!)
                ])
            await replica.close()
        }
    }

    @Test func observersSeeAppRecordChanges() async throws {
        try await withTemporaryStore(configuration: Note.configuration) { store, _ in
            let changes = StreamProbe(store.changes(of: [Note.kind]))
            let everything = StreamProbe(store.changes())
            #expect(await eventually { store.observerCount == 2 })
            try await store.write { db in
                try db.records(Note.self).insert(Note(id: "n", text: "t", pinned: false, due: CalendarDate("2026-01-01")!))
            }
            try await store.write { db in _ = try db.records(Note.self).delete("n") }
            #expect(try await changes.next().changes == [Change(kind: Note.kind, key: "n", operation: .insert)])
            #expect(try await changes.next().changes == [Change(kind: Note.kind, key: "n", operation: .delete)])
            // By default a stream sees every kind, the registered ones included.
            #expect(try await everything.next().changes == [Change(kind: Note.kind, key: "n", operation: .insert)])
        }
    }

    @Test func appMigrationsAreRecordedUnderTheAppAndRefusedWhenEdited() async throws {
        try await withTemporaryDirectory { directory in
            let path = directory.databasePath
            try await withStore(at: path, configuration: Note.configuration) { store in
                let statuses = try await store.migrationStatus()
                #expect(
                    statuses.last
                        == MigrationStatus(
                            version: 1, name: "create_notes", state: .applied,
                            checksum: Note.migrations.migrations[0].checksum,
                            appliedAt: statuses.last?.appliedAt, owner: "notes-app"))
            }
            // Without the app's migrations (storectl, say): opened, and listed as the app's.
            try await withStore(at: path) { store in
                let last = try await store.migrationStatus().last
                #expect(last?.state == .app)
                #expect(last?.owner == "notes-app")
                #expect(try await store.frameworks.count() == 0)
            }
            var edited = Note.configuration
            edited.appMigrations?.migrations[0] = Migration(
                version: 1, name: "create_notes", sql: "CREATE TABLE notes (id TEXT);")
            await #expect(throws: StoreError.self) { try await Store.open(at: path, configuration: edited) }
            do {
                _ = try await Store.open(at: path, configuration: edited)
            } catch let StoreError.migrationModified(migration, _, _) {
                #expect(migration == "notes-app/0001_create_notes")
            }
        }
    }
}

/// Kinds an app might get wrong: each refused when the store opens, with a reason, before any
/// file is made (they used to trap, or fail at the first use, or take over the store's tables).
struct MisregisteredKind: StoreRecord {
    nonisolated(unsafe) static var tableName = "notes"
    nonisolated(unsafe) static var columnNames = ["id"]
    var id: String
    static let kind = RecordKind(rawValue: "misregistered")
    static var table: String { tableName }
    static var columns: [String] { columnNames }
    var key: String { id }
    var columnValues: [SQLValue] { [.text(id)] }
    init(columnValues values: [SQLValue]) throws { id = values[0].textValue ?? "" }
    static func decode(_ fields: inout FeedFields) -> MisregisteredKind? { nil }
    var feedValue: JSONValue { .object(["id": .string(id)]) }
}

@Suite("App kinds registered wrong are refused, not trapped", .serialized)
struct AppKindRegistrationTests {
    @Test(
        "a table of the store's own, or an SQL keyword as a table or column: refused naming it, no file made",
        arguments: [
            ("frameworks", ["id"], "is the store's own"),
            ("change_log", ["id"], "is the store's own"),
            ("order", ["id"], "SQLite cannot read as a name"),
            ("things", ["id", "values"], "SQLite cannot read as a name"),
        ])
    func refused(_ table: String, _ columns: [String], _ reason: String) async throws {
        MisregisteredKind.tableName = table
        MisregisteredKind.columnNames = columns
        defer { (MisregisteredKind.tableName, MisregisteredKind.columnNames) = ("notes", ["id"]) }
        try await withTemporaryDirectory { directory in
            var configuration = Store.Configuration()
            configuration.recordTypes = [MisregisteredKind.self]
            await #expect {
                _ = try await Store.open(at: directory.databasePath, configuration: configuration)
            } throws: { error in
                guard case StoreError.invalidConfiguration(let text) = error else { return false }
                return text.contains(reason) && text.contains(table == "things" ? "'values'" : "'\(table)'")
            }
            #expect(!FileManager.default.fileExists(atPath: directory.databasePath))
        }
    }

    @Test("keywords SQLite reads as names are accepted (key, end, first, action, row, filter...)")
    func keywordsThatWorkAsNames() {
        for name in [
            "key", "end", "first", "last", "desc", "action", "row", "rows", "temp", "view", "plan", "query",
            "no", "of", "match", "filter", "range", "replace", "offset", "text", "due",
        ] {
            #expect(RecordTypeCheck.compilesAsName(name), "\(name)")
        }
        for name in ["order", "values", "select", "where", "group", "table", "from"] {
            #expect(!RecordTypeCheck.compilesAsName(name), "\(name)")
        }
    }

    @Test("a kind registered twice, two kinds on one table, two app migrations with one version")
    func refusedTogether() async throws {
        try await withTemporaryDirectory { directory in
            func reason(_ configuration: Store.Configuration) async -> String? {
                do {
                    _ = try await Store.open(at: directory.databasePath, configuration: configuration)
                    return nil
                } catch StoreError.invalidConfiguration(let reason) {
                    return reason
                } catch {
                    return "\(error)"
                }
            }
            var twice = Store.Configuration()
            twice.recordTypes = [Note.self, Note.self]
            #expect(await reason(twice)?.contains("registered twice") == true)
            var sharing = Store.Configuration()
            sharing.recordTypes = [Note.self, MisregisteredKind.self]
            #expect(await reason(sharing)?.contains("share the table 'notes'") == true)
            var migrations = Store.Configuration()
            migrations.appMigrations = AppMigrations(
                namespace: "twice",
                migrations: [
                    Migration(version: 1, name: "a", sql: "CREATE TABLE a (id TEXT)"),
                    Migration(version: 1, name: "b", sql: "CREATE TABLE b (id TEXT)"),
                ])
            #expect(await reason(migrations)?.contains("have version 1") == true)
            #expect(!FileManager.default.fileExists(atPath: directory.databasePath))
        }
    }
}
