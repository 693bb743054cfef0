import Foundation
import Testing

@testable import Store

/// One store file, two programs: the app, which registers `Note`, and another (storectl, a
/// widget extension) that registers the built-in kinds only. What the other program skips, the
/// app must still receive, and nothing it publishes may leave the app's records out.
@Suite("An app's kind, and a program that does not register it")
struct AppKindOtherProgramTests {
    private static func syncOptions() -> SyncOptions {
        var options = SyncOptions()
        options.policy = .preferRemote
        return options
    }

    private static func noteIDs(_ store: Store) async throws -> [String] {
        try await store.read { try $0.records(Note.self).fetchAll().map(\.id) }
    }

    @Test(
        "a sync by a program without the app's kind moves no cursor past the app's records: the app's next sync reads the snapshot"
    )
    func syncByAnotherProgram() async throws {
        try await withTemporaryStore(configuration: Note.configuration) { source, directory in
            try await source.write { db in
                try db.records(Note.self).insert(Note(id: "n1", text: "one", pinned: false, due: CalendarDate("2026-11-24")!))
            }
            let folder = directory.url.appendingPathComponent("public", isDirectory: true)
            _ = try await source.publish(to: folder)
            let manifest = try FeedSource(folder.appendingPathComponent(PublishedManifest.fileName).path)
            let clientPath = directory.file("client.sqlite")

            var client = try await Store.open(at: clientPath, configuration: Note.configuration)
            _ = try await client.sync(from: manifest, options: Self.syncOptions())
            #expect(try await Self.noteIDs(client) == ["n1"])
            await client.close()

            try await source.write { db in
                try db.records(Note.self).insert(Note(id: "n2", text: "two", pinned: true, due: CalendarDate("2026-11-25")!))
                try db.frameworks.insert(
                    Framework(id: "arkit", name: "ARKit", imageName: "a", urlString: "https://a", description: "d"))
            }
            // A store this small also gets a new snapshot; the change is in a segment all the same.
            #expect(try await source.publish(to: folder).filesWritten.contains { $0.hasPrefix("segment-") })

            // The other program: the framework is applied, the note skipped (not its kind).
            let other = try await Store.open(at: clientPath)
            let skipped = try await other.sync(from: manifest, options: Self.syncOptions())
            #expect(skipped.frameworks.inserted == 1)
            await other.close()

            // The app's next sync: the cursor is at the head, but the last sync applied other
            // kinds, so it reads the whole feed again. It used to be up to date without n2.
            client = try await Store.open(at: clientPath, configuration: Note.configuration)
            let report = try await client.sync(from: manifest, options: Self.syncOptions())
            #expect(report.status == .applied, "\(report)")
            #expect(report.published?.fullSyncReason?.contains("did not apply the record kind 'note'") == true, "\(report)")
            #expect(report.appKinds[Note.kind]?.inserted == 1)
            #expect(try await Self.noteIDs(client) == ["n1", "n2"])
            // And the one after continues from the cursor again.
            let next = try await client.sync(from: manifest, options: Self.syncOptions())
            #expect(next.status == .upToDate, "\(next)")
            await client.close()
        }
    }

    @Test("a full sync's reason: forced, another policy, other kinds, kinds never recorded; none otherwise")
    func fullSyncReasons() {
        let builtIn = RecordKinds.builtIn
        let withNotes = RecordKinds.handlers(registering: [Note.self])
        var options = SyncOptions()
        options.policy = .keepExisting
        let last = SourceState(pages: [], policy: .keepExisting, kinds: SyncStateTable.kindsKey(builtIn))
        #expect(Store.fullSyncReason(options: options, last: last, kinds: builtIn) == nil)
        #expect(Store.fullSyncReason(options: options, last: nil, kinds: builtIn) == nil)
        #expect(Store.fullSyncReason(options: options, last: last, kinds: withNotes)?.contains("'note'") == true)
        // Fewer kinds than the last sync applied continue from its cursor.
        let lastWithNotes = SourceState(pages: [], policy: .keepExisting, kinds: SyncStateTable.kindsKey(withNotes))
        #expect(Store.fullSyncReason(options: options, last: lastWithNotes, kinds: builtIn) == nil)
        // Kinds never recorded (a sync before migration 0014): it applied at least the built-in
        // ones, so a program with only those continues; one with an app kind reads everything.
        var older = last
        older.kinds = nil
        #expect(Store.fullSyncReason(options: options, last: older, kinds: builtIn) == nil)
        #expect(Store.fullSyncReason(options: options, last: older, kinds: withNotes)?.contains("0014") == true)
        options.policy = .preferRemote
        #expect(Store.fullSyncReason(options: options, last: last, kinds: builtIn)?.contains("policy") == true)
        options.force = true
        #expect(Store.fullSyncReason(options: options, last: last, kinds: builtIn) == "a full sync was asked for")
        // The recorded key does not depend on the order the kinds were registered in.
        #expect(SyncStateTable.kindsKey(withNotes) == SyncStateTable.kindsKey(withNotes.reversed()))
    }

    @Test("a publish by a program without the app's kind is refused, and the folder left as it was")
    func publishByAnotherProgram() async throws {
        try await withTemporaryStore(configuration: Note.configuration) { source, directory in
            try await source.write { db in
                try db.records(Note.self).insert(Note(id: "n1", text: "one", pinned: false, due: CalendarDate("2026-11-24")!))
            }
            await source.close()
            let folder = directory.url.appendingPathComponent("public", isDirectory: true)
            let other = try await Store.open(at: directory.databasePath)
            await #expect(throws: PublishError.self) { _ = try await other.publish(to: folder) }
            do {
                _ = try await other.publish(to: folder)
            } catch let error as PublishError {
                #expect(error.reason.contains("notes-app"), "\(error)")
            }
            #expect(try await other.otherAppNamespaces() == ["notes-app"])
            await other.close()
            #expect((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] == [])
        }
    }

    @Test("merging segments refuses one holding a kind the publisher does not register, rather than drop it")
    func segmentWithAnotherKind() throws {
        let kinds = RecordKinds.builtIn.map(\.kind)
        let withNotes = Data(
            #"{"version": 2, "generation": "g", "from": 2, "to": 2, "frameworks": [], "notes": [{"id": "n2"}], "deleted": {"frameworks": []}}"#
                .utf8)
        #expect(throws: ManifestError.self) { try PublishedSegment.parse(withNotes, source: "segment-2-2.json", kinds: kinds) }
        let deletedNotes = Data(
            #"{"version": 2, "generation": "g", "from": 2, "to": 2, "frameworks": [], "deleted": {"notes": ["n1"]}}"#.utf8)
        #expect(throws: ManifestError.self) { try PublishedSegment.parse(deletedNotes, source: "segment-2-2.json", kinds: kinds) }
        // Empty arrays of another kind hold nothing to lose.
        let empty = Data(
            #"{"version": 2, "generation": "g", "from": 2, "to": 2, "frameworks": [], "notes": [], "deleted": {"notes": []}}"#
                .utf8)
        #expect(try PublishedSegment.parse(empty, source: "segment-2-2.json", kinds: kinds).isEmpty)
    }
}
