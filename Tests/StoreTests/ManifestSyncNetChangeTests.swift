import Foundation
import Testing

@testable import Store

/// A manifest sync applies the change from its cursor (or the snapshot) to the head: a key
/// changed by several of the files it reads is reconciled once, in its last state, against the
/// store as it was before the sync.
@Suite("Manifest sync: each key in its last state")
struct ManifestSyncNetChangeTests {
    /// Segments only, however small the store: no snapshot refresh.
    static var options: PublishOptions {
        var options = PublishOptions()
        options.compaction.snapshotRefreshRatio = 1_000
        options.gracePeriod = 0
        return options
    }

    static func counts(inserted: Int = 0, kept: Int = 0) -> SyncReport.Counts {
        var counts = SyncReport.Counts()
        counts.inserted = inserted
        counts.kept = kept
        return counts
    }

    /// Publishes after each step: the snapshot (x, a, b), then x changed twice, y added then
    /// changed, b deleted then added again, z added then deleted.
    static func publishHistory(_ source: Store, into folder: URL) async throws {
        try await source.frameworks.insert(["x", "a", "b"].map { Fixtures.framework($0) })
        _ = try await source.publish(to: folder, options: options)
        let steps: [@Sendable (Store) async throws -> Void] = [
            { try await $0.frameworks.update(Fixtures.framework("x", name: "X 2")) },
            { try await $0.frameworks.insert(Fixtures.framework("y", name: "Y 1")) },
            { try await $0.frameworks.update(Fixtures.framework("x", name: "X 3")) },
            { try await $0.frameworks.update(Fixtures.framework("y", name: "Y 2")) },
            { _ = try await $0.frameworks.delete("b") },
            { try await $0.frameworks.insert(Fixtures.framework("z")) },
            { try await $0.frameworks.insert(Fixtures.framework("b", name: "B again")) },
            { _ = try await $0.frameworks.delete("z") },
        ]
        for step in steps {
            try await step(source)
            _ = try await source.publish(to: folder, options: options)
        }
    }

    @Test(arguments: [SyncPolicy.keepExisting, .preferRemote, .threeWay])
    func aNewReplicaEndsEqualToTheSource(policy: SyncPolicy) async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("published", isDirectory: true)
            try await Self.publishHistory(source, into: folder)
            let manifest = try PublishedManifest.parse(
                try Data(contentsOf: folder.appendingPathComponent(PublishedManifest.fileName)), source: "manifest")
            #expect(manifest.segments.count >= 1 && manifest.snapshotSequence == 1, "the sync reads a snapshot and segments")
            let replica = try await Store.open(at: directory.file("replica.sqlite"))
            var options = SyncOptions()
            options.policy = policy
            let report = try await replica.sync(
                from: try FeedSource(folder.appendingPathComponent(PublishedManifest.fileName).path), options: options)
            #expect(try await replica.frameworks.fetchAll() == source.frameworks.fetchAll(), "\(policy)")
            // Every record is new to the replica: inserted once, as the head has it.
            #expect(report.frameworks == Self.counts(inserted: 4), "\(report.frameworks)")
            await replica.close()
        }
    }

    @Test func aReplicaBehindTakesNewRecordsInTheirLastStateAndKeepsItsOwn() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("published", isDirectory: true)
            let manifestPath = folder.appendingPathComponent(PublishedManifest.fileName).path
            try await source.frameworks.insert(["x", "a", "b"].map { Fixtures.framework($0) })
            _ = try await source.publish(to: folder, options: Self.options)
            let replica = try await Store.open(at: directory.file("replica.sqlite"))
            _ = try await replica.sync(from: try FeedSource(manifestPath))
            // Three publishes later: y added, then changed twice; x changed (kept: keep-existing).
            try await source.frameworks.insert(Fixtures.framework("y", name: "Y 1"))
            _ = try await source.publish(to: folder, options: Self.options)
            try await source.frameworks.update(Fixtures.framework("y", name: "Y 2"))
            try await source.frameworks.update(Fixtures.framework("x", name: "X 2"))
            _ = try await source.publish(to: folder, options: Self.options)
            try await source.frameworks.update(Fixtures.framework("y", name: "Y 3"))
            _ = try await source.publish(to: folder, options: Self.options)
            let report = try await replica.sync(from: try FeedSource(manifestPath))
            #expect(report.published?.fullSyncReason == nil, "an incremental sync")
            #expect(try await replica.frameworks.find("y")?.name == "Y 3")
            #expect(try await replica.frameworks.find("x")?.name == Fixtures.framework("x").name)
            #expect(report.frameworks == Self.counts(inserted: 1, kept: 1), "\(report.frameworks)")
            await replica.close()
        }
    }

    /// A client upgraded from a version before migration 0014 (its sources' kinds never
    /// recorded) used to read the whole snapshot again at its first sync: under prefer-remote
    /// that overwrote its local edits, under keep-existing it brought back its local deletions.
    @Test(
        "after an upgrade from before 0014, the next sync continues from the cursor",
        arguments: [SyncPolicy.preferRemote, .keepExisting])
    func upgradedClientContinues(policy: SyncPolicy) async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("published", isDirectory: true)
            let manifest = try FeedSource(folder.appendingPathComponent(PublishedManifest.fileName).path)
            try await source.frameworks.insert(["x", "a", "b"].map { Fixtures.framework($0) })
            _ = try await source.publish(to: folder, options: Self.options)
            let client = try await Store.open(at: directory.file("client.sqlite"))
            var options = SyncOptions()
            options.policy = policy
            _ = try await client.sync(from: manifest, options: options)
            try await client.frameworks.update(Fixtures.framework("x", name: "local edit"))
            _ = try await client.frameworks.delete("a")
            // As a version before migration 0014 left it.
            try await client.write { db in try db.execute("UPDATE sync_sources SET kinds = NULL") }

            let report = try await client.sync(from: manifest, options: options)
            #expect(report.status == .upToDate, "\(report)")
            #expect(try await client.frameworks.find("x")?.name == "local edit")
            #expect(try await client.frameworks.find("a") == nil)
            await client.close()
        }
    }

    @Test("keys that differ only in Unicode form are two records, in the publish and in the sync")
    func keysAreComparedByteForByte() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("published", isDirectory: true)
            let manifest = folder.appendingPathComponent(PublishedManifest.fileName).path
            let (composed, decomposed) = ("\u{E9}", "e\u{301}") // é, NFC and NFD: equal as Swift Strings
            try await source.frameworks.insert([
                Fixtures.framework(composed), Fixtures.framework(decomposed), Fixtures.framework("x"),
            ])
            _ = try await source.publish(to: folder, options: Self.options)
            // The sync: only the NFD record changes in a segment; the NFC one is the snapshot's.
            try await source.frameworks.update(Fixtures.framework(decomposed, name: "NFD 2"))
            _ = try await source.publish(to: folder, options: Self.options)
            try await source.frameworks.insert(Fixtures.framework("y"))
            _ = try await source.publish(to: folder, options: Self.options)
            let first = try await Store.open(at: directory.file("first.sqlite"))
            #expect(try await first.sync(from: try FeedSource(manifest)).frameworks.inserted == 4)
            #expect(try await first.frameworks.fetchAll() == source.frameworks.fetchAll())
            await first.close()
            // The publish: both records change, in segments merged into one.
            try await source.frameworks.update(Fixtures.framework(composed, name: "NFC 2"))
            _ = try await source.publish(to: folder, options: Self.options)
            try await source.frameworks.update(Fixtures.framework(decomposed, name: "NFD 3"))
            _ = try await source.publish(to: folder, options: Self.options)
            let second = try await Store.open(at: directory.file("second.sqlite"))
            #expect(try await second.sync(from: try FeedSource(manifest)).frameworks.inserted == 4)
            let names = try await second.frameworks.fetchAll().map(\.name)
            let sourceNames = try await source.frameworks.fetchAll().map(\.name)
            #expect(names == sourceNames)
            #expect(names.contains("NFC 2") && names.contains("NFD 3"), "\(names)")
            await second.close()
        }
    }

    @Test("superseded keys past the memory limit are kept on disk, with the same answers", arguments: [1, 1 << 18])
    func supersededKeysSpillToDisk(memoryLimit: Int) async throws {
        try await withTemporaryDirectory { directory in
            // Three segments (groups 1 to 3) after a snapshot page (group 0).
            let documents = [
                #"{"version": 1, "frameworks": []}"#,
                #"{"version": 2, "generation": "g", "from": 2, "to": 2, "frameworks": [{"id": "a", "name": "A", "imageName": "a", "urlString": "u", "description": "d"}], "deleted": {"frameworks": ["b"]}}"#,
                #"{"version": 2, "generation": "g", "from": 3, "to": 3, "frameworks": [{"id": "c", "name": "C", "imageName": "c", "urlString": "u", "description": "d"}]}"#,
                #"{"version": 2, "generation": "g", "from": 4, "to": 4, "frameworks": [{"id": "a", "name": "A2", "imageName": "a", "urlString": "u", "description": "d"}]}"#,
            ]
            var pages: [(file: PublishedFileLoader.Loaded, isSegment: Bool)] = []
            for (index, text) in documents.enumerated() {
                let path = directory.file("page-\(index).json")
                try Data(text.utf8).write(to: URL(fileURLWithPath: path))
                let opened = PublishedFileLoader.OpenedFile(descriptor: open(path, O_RDONLY))
                let loaded = PublishedFileLoader.Loaded(
                    url: URL(fileURLWithPath: path), name: path, file: opened, size: text.utf8.count)
                pages.append((loaded, index > 0))
            }
            let keys = try SupersededKeys(pages: pages, kinds: RecordKinds.builtIn, memoryLimit: memoryLimit)
            #expect(try keys.isSuperseded(.framework, "a", inGroup: 0))
            #expect(try keys.isSuperseded(.framework, "a", inGroup: 1))
            #expect(try !keys.isSuperseded(.framework, "a", inGroup: 3))
            #expect(try keys.isSuperseded(.framework, "b", inGroup: 0))
            #expect(try !keys.isSuperseded(.framework, "b", inGroup: 1))
            #expect(try !keys.isSuperseded(.framework, "c", inGroup: 2))
            #expect(try !keys.isSuperseded(.framework, "z", inGroup: 0))
        }
    }
}
