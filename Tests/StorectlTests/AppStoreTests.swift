import Foundation
import Store
import Testing

/// An app's own kind, defined here as an app would (Examples/Reminders is the same shape, in its
/// own package): registered through `Store.Configuration`, its table made by its own migration.
/// storectl knows nothing of it.
struct Memo: StoreRecord, Equatable {
    var id: String
    var text: String

    static let kind = RecordKind(rawValue: "memo")
    static let table = "memos"
    static let columns = ["id", "text"]

    var key: String { id }
    var columnValues: [SQLValue] { [.text(id), .text(text)] }

    init(id: String, text: String) {
        self.id = id
        self.text = text
    }

    init(columnValues values: [SQLValue]) throws {
        self.init(id: values[0].textValue ?? "", text: values[1].textValue ?? "")
    }

    static func decode(_ fields: inout FeedFields) -> Memo? {
        guard let id = fields.string("id"), let text = fields.string("text") else { return nil }
        return Memo(id: id, text: text)
    }

    var feedValue: JSONValue { .object(["id": .string(id), "text": .string(text)]) }

    static let migrations = AppMigrations(
        namespace: "memos-app",
        migrations: [
            Migration(
                version: 1, name: "create_memos",
                sql: "CREATE TABLE memos (id TEXT PRIMARY KEY NOT NULL, text TEXT NOT NULL) STRICT;")
        ])

    static var configuration: Store.Configuration {
        var configuration = Store.Configuration()
        configuration.recordTypes = [Memo.self]
        configuration.appMigrations = migrations
        return configuration
    }
}

/// storectl on a store an app made, with the app's own kind and migration: it opens it, lists
/// the app's migration as the app's, exports the built-in kinds, and watches the app's kind by
/// name.
@Suite("storectl on an app's store", .timeLimit(.minutes(10)))
struct AppStoreTests {
    /// The app's store at `storectl.db`: a framework (through storectl) and two memos (through
    /// the app, that is this process with `Memo` registered).
    func appStore() async throws -> Storectl {
        let storectl = try Storectl()
        let store = try await Store.open(at: storectl.db, configuration: Memo.configuration)
        try await store.write { db in
            try db.records(Memo.self).insert(Memo(id: "m-1", text: "Buy milk"))
            try db.records(Memo.self).insert(Memo(id: "m-2", text: "Call Ann"))
        }
        await store.close()
        expectSuccess(try await storectl.run(WatchTests.addFramework("arkit")))
        return storectl
    }

    @Test("publish refuses an app's store (it would leave the app's records out), and leaves the folder as it was")
    func publishRefused() async throws {
        // It wrote a snapshot without the memos, and merged the app's segments dropping theirs:
        // the app's clients never received them.
        let storectl = try await appStore()
        let folder = storectl.directory.path + "/public"
        let refused = try await storectl("publish", folder)
        expectFailure(refused, status: 1, mentioning: ["memos-app", "publish from the app"])
        #expect((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] == [], "\(refused)")
        // The app itself publishes its store, memos included.
        let store = try await Store.open(at: storectl.db, configuration: Memo.configuration)
        let report = try await store.publish(to: URL(fileURLWithPath: folder))
        await store.close()
        #expect(report.outcome == .snapshot)
        let snapshot = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("snapshot-") }
        let texts = try snapshot.map { try String(contentsOfFile: folder + "/" + $0, encoding: .utf8) }
        #expect(texts.contains { $0.contains(#""m-2""#) }, "\(snapshot)")
        // And storectl still refuses to publish on top of it (merging would drop the memos).
        expectFailure(try await storectl("publish", folder), status: 1, mentioning: ["memos-app"])
    }

    @Test("migrate status lists the app's migration as the app's, after the library's, and exits 0")
    func migrateStatus() async throws {
        let storectl = try await appStore()
        let json = expectSuccess(try await storectl("migrate", "status", "--json"))
        let statuses = try JSON.array(json.stdout)
        let app = statuses.filter { $0["owner"] != nil }
        try #require(app.count == 1, "\(json)")
        #expect(app[0]["owner"] as? String == "memos-app")
        #expect(app[0]["state"] as? String == "app")
        #expect(app[0]["name"] as? String == "create_memos")
        #expect(JSON.integer(app[0]["version"]) == 1)
        #expect(app[0]["appliedAt"] is String, "\(app[0])")
        let library = statuses.filter { $0["owner"] == nil }
        #expect(library.count >= 4 && library.allSatisfy { $0["state"] as? String == "applied" }, "\(json)")

        let text = expectSuccess(try await storectl("migrate", "status"))
        let row = text.lines.first { $0.hasPrefix("memos-app/0001_create_memos ") }
        #expect(row?.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first == "app", "\(text)")
        // `migrate` itself leaves the app's migration alone and the store usable.
        let migrate = expectSuccess(try await storectl("migrate"))
        #expect(migrate.output.contains("up to date"), "\(migrate)")
        let listed = expectSuccess(try await storectl("frameworks", "list", "--json"))
        #expect(try JSON.array(listed.stdout).map { $0["id"] as? String } == ["arkit"])
    }

    @Test("export writes the built-in kinds of an app's store (the app's kind is the app's to export), and says so")
    func export() async throws {
        let storectl = try await appStore()
        let result = expectSuccess(try await storectl("export"))
        #expect(
            result.stderr.contains("the store also holds the tables of the app 'memos-app'")
                && result.stderr.contains("not in this export"), "\(result)")
        let feed = try JSON.object(result.stdout)
        #expect(Set(feed.keys) == ["version", "frameworks", "orders", "events", "images"], "\(result)")
        let frameworks = try #require(feed["frameworks"] as? [[String: Any]])
        #expect(frameworks.map { $0["id"] as? String } == ["arkit"])
        #expect((feed["orders"] as? [Any])?.isEmpty == true)
        // The store is unchanged: the app still reads its memos.
        let store = try await Store.open(at: storectl.db, configuration: Memo.configuration)
        let memos = try await store.read { try $0.records(Memo.self).fetchAll() }
        await store.close()
        #expect(memos.map(\.id) == ["m-1", "m-2"])
    }

    @Test("watch --kind memo prints the app's changes, committed by the app's process, and nothing else")
    func watchAppKind() async throws {
        let storectl = try await appStore()
        let watcher = try await Watcher(storectl, ["watch", "--kind", "memo", "--json"])
        defer { watcher.kill() }
        #expect(await watcher.waitForStderr(containing: "watching"), "\(watcher.stderr)")
        // Another process (storectl) changes a framework: not printed.
        expectSuccess(try await storectl.run(WatchTests.addFramework("metal")))
        let store = try await Store.open(at: storectl.db, configuration: Memo.configuration)
        try await store.write { db in try db.records(Memo.self).insert(Memo(id: "m-3", text: "Water plants")) }
        try await store.write { db in try db.records(Memo.self).update(Memo(id: "m-1", text: "Buy oat milk")) }
        // Raw SQL on the app's table is logged as the app's kind too.
        try await store.write { db in try db.execute("DELETE FROM memos WHERE id = ?", ["m-2"]) }
        await store.close()
        let expected = [
            WatchTests.Line("memo", "m-3", "insert"), WatchTests.Line("memo", "m-1", "update"),
            WatchTests.Line("memo", "m-2", "delete"),
        ]
        #expect(try await watcher.jsonLines(count: 3) == expected)
        let exit = try await watcher.interrupt()
        #expect(exit.status == 0, "\(exit)")
        #expect(try watcher.jsonLinesNow() == expected, "only the memos, nothing after: \(exit)")
    }

    @Test("watch without --kind prints every kind, the app's own kind included")
    func watchPrintsAppKindsByDefault() async throws {
        let storectl = try await appStore()
        let watcher = try await Watcher(storectl, ["watch", "--json"])
        defer { watcher.kill() }
        #expect(await watcher.waitForStderr(containing: "watching"), "\(watcher.stderr)")
        expectSuccess(try await storectl.run(WatchTests.addFramework("metal")))
        let store = try await Store.open(at: storectl.db, configuration: Memo.configuration)
        try await store.write { db in try db.records(Memo.self).insert(Memo(id: "m-3", text: "Water plants")) }
        await store.close()
        let expected = [WatchTests.Line("framework", "metal", "insert"), WatchTests.Line("memo", "m-3", "insert")]
        #expect(try await watcher.jsonLines(count: 2) == expected)
        let exit = try await watcher.interrupt()
        #expect(exit.status == 0, "\(exit)")
    }

    @Test("watch --kind takes only a name the change log can hold: a usage error (64) quotes anything else")
    func watchRefusesMalformedKinds() async throws {
        let storectl = try await appStore()
        for kind in ["Memo", "memo-app", "", "1memo", "memo item", "mémo"] {
            let result = try await storectl("watch", "--kind", kind)
            #expect(result.status == 64, "\(result)")
            #expect(result.stderr.contains("'\(kind)'") && result.stderr.contains("--kind"), "\(result)")
            #expect(result.stdout.isEmpty, "\(result)")
        }
    }
}
