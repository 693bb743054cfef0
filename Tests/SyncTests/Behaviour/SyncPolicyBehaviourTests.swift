import Foundation
import Testing

@testable import Store

/// The rules table of `Reconciler`, policy by policy and kind by kind, on a real SQLite file.
@Suite(.timeLimit(.minutes(10)))
struct SyncPolicyBehaviourTests {
    /// The state after the scenario, record by record: the version each id is at (nil: absent).
    typealias Expected = (counts: SyncReport.Counts, conflicts: [String], versions: [String: Int?])

    /// Sync 1 sends same, remote, local, both, gone at v1 (`pre` exists locally, never sent);
    /// then locally `local` and `both` become v2 and `gone` is deleted; sync 2 sends same v1,
    /// remote v3, local v1, both v3, gone v1, pre v3 and a new record.
    static func expected(_ policy: SyncPolicy) -> Expected {
        switch policy {
        case .keepExisting:
            (
                counts(inserted: 2, kept: 4, unchanged: 1), [],
                ["same": 1, "remote": 1, "local": 2, "both": 2, "gone": 1, "pre": 1, "new": 1]
            )
        case .preferRemote:
            (
                counts(inserted: 2, updated: 4, unchanged: 1), [],
                ["same": 1, "remote": 3, "local": 1, "both": 3, "gone": 1, "pre": 3, "new": 1]
            )
        case .threeWay:
            // remote: changed only remotely → updated; local: changed only locally → unchanged;
            // both and pre (no common base): conflicts, kept; gone: deleted locally, stays deleted.
            (
                counts(inserted: 1, updated: 1, kept: 2, unchanged: 3), ["both", "pre"],
                ["same": 1, "remote": 3, "local": 2, "both": 2, "gone": nil, "pre": 1, "new": 1]
            )
        }
    }

    @Test(arguments: SyncPolicy.allCases, KindFixture.allCases)
    func policyRules(_ policy: SyncPolicy, _ fixture: KindFixture) async throws {
        try await withBehaviourStore { store, folder in
            let options = SyncOptions(policy: policy)
            try await fixture.insert("pre", 1, into: store)
            let source = try folder.write(
                "feed.json", behaviourFeed(fixture, ["same", "remote", "local", "both", "gone"].map { fixture.json($0, 1) }))
            let first = try await store.sync(from: source, options: options)
            #expect(first.status == .applied)
            #expect(first[fixture.kind] == counts(inserted: 5))

            try await fixture.update("local", 2, in: store)
            try await fixture.update("both", 2, in: store)
            try await fixture.delete("gone", from: store)

            try folder.write(
                "feed.json",
                behaviourFeed(
                    fixture,
                    [
                        fixture.json("same", 1), fixture.json("remote", 3), fixture.json("local", 1), fixture.json("both", 3),
                        fixture.json("gone", 1), fixture.json("pre", 3), fixture.json("new", 1),
                    ]))
            let report = try await store.sync(from: source, options: options)

            let expected = Self.expected(policy)
            #expect(report.status == .applied)
            #expect(report.policy == policy)
            #expect(report[fixture.kind] == expected.counts)
            for other in KindFixture.allCases where other != fixture {
                #expect(report[other.kind] == counts())
            }
            #expect(report.conflicts == expected.conflicts.map { Change(kind: fixture.kind, key: $0, operation: .update) })
            for (id, version) in expected.versions.sorted(by: { $0.key < $1.key }) {
                #expect(try await fixture.version(id, in: store) == version, "\(id)")
            }

            // Syncing the same feed again changes nothing more (apart from three-way conflicts,
            // which stay conflicts, and what keep-existing keeps).
            let again = try await store.sync(from: source, options: options)
            #expect(again[fixture.kind].inserted == 0)
            #expect(again[fixture.kind].updated == 0)
            #expect(again[fixture.kind].deleted == 0)
            #expect(again.conflicts == report.conflicts)
            for (id, version) in expected.versions {
                #expect(try await fixture.version(id, in: store) == version, "\(id) after the second sync")
            }
        }
    }

    /// Three-way applies a later remote change once the local side is back in step: after
    /// prefer-remote settles a conflict, the next three-way sync takes remote changes again.
    @Test(arguments: KindFixture.allCases)
    func threeWayFollowsTheLastReceivedVersion(_ fixture: KindFixture) async throws {
        try await withBehaviourStore { store, folder in
            let threeWay = SyncOptions(policy: .threeWay)
            let source = try folder.write("feed.json", behaviourFeed(fixture, [fixture.json("a", 1)]))
            _ = try await store.sync(from: source, options: threeWay)
            // A remote change, then another: each applies (nothing changed locally).
            for version in [2, 3] {
                try folder.write("feed.json", behaviourFeed(fixture, [fixture.json("a", version)]))
                let report = try await store.sync(from: source, options: threeWay)
                #expect(report[fixture.kind] == counts(updated: 1))
                #expect(try await fixture.version("a", in: store) == version)
            }
            // The same record from another source has no common base there: a conflict.
            let other = try folder.write("other.json", behaviourFeed(fixture, [fixture.json("a", 4)]))
            let fromOther = try await store.sync(from: other, options: threeWay)
            #expect(fromOther[fixture.kind] == counts(kept: 1))
            #expect(fromOther.conflicts.map(\.key) == ["a"])
            #expect(try await fixture.version("a", in: store) == 3)
        }
    }

    // MARK: Tombstones

    /// Sync 1 sends a, b, c; locally b becomes v2 and l is inserted; sync 2 deletes a, b, l and
    /// an id nobody has.
    @Test(arguments: SyncPolicy.allCases, KindFixture.allCases)
    func tombstones(_ policy: SyncPolicy, _ fixture: KindFixture) async throws {
        try await withBehaviourStore { store, folder in
            let options = SyncOptions(policy: policy)
            let source = try folder.write("feed.json", behaviourFeed(fixture, ["a", "b", "c"].map { fixture.json($0, 1) }))
            _ = try await store.sync(from: source, options: options)
            try await fixture.update("b", 2, in: store)
            try await fixture.insert("l", 1, into: store)

            try folder.write("feed.json", behaviourFeed(fixture, [], deleted: ["a", "b", "l", "absent"]))
            let report = try await store.sync(from: source, options: options)

            switch policy {
            case .preferRemote:
                #expect(report[fixture.kind] == counts(deleted: 3))
                for id in ["a", "b", "l"] { #expect(try await fixture.version(id, in: store) == nil, "\(id)") }
            case .keepExisting, .threeWay:
                // Only `a` is as it was received from this source; b was modified locally and
                // l never came from it.
                #expect(report[fixture.kind] == counts(kept: 2, deleted: 1))
                #expect(try await fixture.version("a", in: store) == nil)
                #expect(try await fixture.version("b", in: store) == 2)
                #expect(try await fixture.version("l", in: store) == 1)
            }
            #expect(report.conflicts.isEmpty)
            #expect(try await fixture.version("c", in: store) == 1)
            #expect(try await fixture.version("absent", in: store) == nil)
        }
    }

    /// A tombstone only deletes what was received from the same source.
    @Test(arguments: [SyncPolicy.keepExisting, .threeWay])
    func tombstoneFromAnotherSourceKeepsTheRecord(_ policy: SyncPolicy) async throws {
        try await withBehaviourStore { store, folder in
            let options = SyncOptions(policy: policy)
            let one = try folder.write("one.json", behaviourFeed(.event, [KindFixture.event.json("e", 1)]))
            _ = try await store.sync(from: one, options: options)
            let two = try folder.write("two.json", behaviourFeed(.event, [], deleted: ["e"]))
            let report = try await store.sync(from: two, options: options)
            #expect(report.events == counts(kept: 1))
            #expect(try await KindFixture.event.version("e", in: store) == 1)
            // From its own source, it goes.
            try folder.write("one.json", behaviourFeed(.event, [], deleted: ["e"]))
            let own = try await store.sync(from: one, options: options)
            #expect(own.events == counts(deleted: 1))
            #expect(try await store.events.count() == 0)
        }
    }

    // MARK: Images

    @Test(arguments: SyncPolicy.allCases)
    func inlineImagesUnderEachPolicy(_ policy: SyncPolicy) async throws {
        try await withBehaviourStore { store, folder in
            let options = SyncOptions(policy: policy)
            let url = "https://example.com/a.png", other = "https://example.com/b.png"
            let source = try folder.write(
                "feed.json",
                behaviourFeed(images: [
                    imageJSON(url, data: Data([1, 1]), contentType: "image/png"),
                    imageJSON(other, data: Data([2]), contentType: "image/gif"),
                ]))
            let first = try await store.sync(from: source, options: options)
            #expect(first.images.stored == 2)
            #expect(try await store.images.get(url)?.data == Data([1, 1]))
            #expect(try await store.images.get(other)?.contentType == "image/gif")

            // The feed changes a's bytes and deletes b, which was replaced locally meanwhile.
            try await store.images.put(other, data: Data([9]), contentType: "image/gif")
            try folder.write(
                "feed.json",
                behaviourFeed(
                    images: [imageJSON(url, data: Data([3, 3, 3]), contentType: "image/png")], deleted: [.image: [other]]))
            let report = try await store.sync(from: source, options: options)

            var expected = SyncReport.ImageCounts()
            if policy == .preferRemote {
                expected.stored = 1
                expected.deleted = 1
                #expect(try await store.images.get(url)?.data == Data([3, 3, 3]))
                #expect(try await store.images.contains(other) == false)
            } else {
                expected.alreadyCached = 1
                #expect(try await store.images.get(url)?.data == Data([1, 1]))
                #expect(try await store.images.get(other)?.data == Data([9]))
            }
            #expect(report.images == expected)

            // An unchanged image is deleted by its tombstone under every policy.
            try folder.write("feed.json", behaviourFeed(deleted: [.image: [url]]))
            let deleting = try await store.sync(from: source, options: options)
            #expect(deleting.images.deleted == 1)
            #expect(try await store.images.contains(url) == false)
        }
    }

    /// An image is the same only with the same bytes and the same content type: under
    /// prefer-remote a feed that changes only the type replaces the stored one (which kept the
    /// old type, counted as already cached, when only the bytes were compared); the other
    /// policies keep it.
    @Test(arguments: SyncPolicy.allCases)
    func anImageWhoseContentTypeAloneChanged(_ policy: SyncPolicy) async throws {
        try await withBehaviourStore { store, folder in
            let options = SyncOptions(policy: policy)
            let url = "https://example.com/a.img"
            let source = try folder.write(
                "feed.json", behaviourFeed(images: [imageJSON(url, data: Data([1, 2]), contentType: "image/png")]))
            #expect(try await store.sync(from: source, options: options).images.stored == 1)

            try folder.write(
                "feed.json", behaviourFeed(images: [imageJSON(url, data: Data([1, 2]), contentType: "image/gif")]))
            let report = try await store.sync(from: source, options: options)

            var expected = SyncReport.ImageCounts()
            if policy == .preferRemote { expected.stored = 1 } else { expected.alreadyCached = 1 }
            #expect(report.images == expected)
            let stored = try await store.images.get(url)
            #expect(stored?.data == Data([1, 2]))
            #expect(stored?.contentType == (policy == .preferRemote ? "image/gif" : "image/png"))
        }
    }
}
