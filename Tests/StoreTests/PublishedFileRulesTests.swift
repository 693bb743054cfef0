import Foundation
import Testing

@testable import Store

/// The rules of a published feed's files (<doc:FeedFormat>, version 2), on folders written by
/// hand as another publisher would write them: the snapshot's pages are one feed whatever
/// their order, and a `next` in any of them is refused (the manifest lists every file).
@Suite("The files of a published feed")
struct PublishedFileRulesTests {
    /// A folder written by hand: files named by the test, a manifest listing them.
    struct Folder {
        let url: URL

        /// Writes `text` as `name` and returns its manifest entry (name, size, SHA-256).
        func file(_ name: String, _ text: String) throws -> String {
            let data = Data(text.utf8)
            try data.write(to: url.appendingPathComponent(name))
            return #""name": "\#(name)", "size": \#(data.count), "sha256": "\#(SHA256.hexDigest(of: data))""#
        }

        /// Writes manifest.json: generation g1, the snapshot at `sequence`, `segments` after it.
        func manifest(head: Int, sequence: Int, snapshot: [String], segments: [(from: Int, to: Int, entry: String)] = [])
            throws -> FeedSource
        {
            let files = snapshot.map { "{\($0)}" }.joined(separator: ", ")
            let segmentList = segments.map { #"{"from": \#($0.from), "to": \#($0.to), \#($0.entry)}"# }
            let text = #"""
                {"version": 2, "generation": "g1", "head": \#(head),
                 "snapshot": {"sequence": \#(sequence), "files": [\#(files)]},
                 "segments": [\#(segmentList.joined(separator: ", "))]}
                """#
            let path = url.appendingPathComponent(PublishedManifest.fileName)
            try Data(text.utf8).write(to: path)
            return try FeedSource(path.path)
        }
    }

    private static func event(_ id: String) -> String { #"{"id": "\#(id)", "title": "T", "date": "2026-01-01"}"# }

    private static func withFolder(_ body: (Store, Folder) async throws -> Void) async throws {
        try await withTemporaryStore { store, directory in
            let url = directory.url.appendingPathComponent("public", isDirectory: true)
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            try await store.events.insert(Event(id: "local", title: "L", date: CalendarDate("2026-01-01")!))
            try await body(store, Folder(url: url))
        }
    }

    @Test("records in the last snapshot page and tombstones in an earlier one are applied: the pages are one feed")
    func snapshotPagesAreOneFeed() async throws {
        try await Self.withFolder { store, folder in
            let tombstones = try folder.file("page-1.json", #"{"version": 1, "deleted": {"events": ["local"]}}"#)
            let records = try folder.file("page-2.json", #"{"version": 1, "events": [\#(Self.event("new"))]}"#)
            let manifest = try folder.manifest(head: 1, sequence: 1, snapshot: [tombstones, records])
            _ = try await store.sync(from: manifest, options: SyncOptions(policy: .preferRemote))
            #expect(try await store.events.find("local") == nil)
            #expect(try await store.events.find("new") != nil)
        }
    }

    @Test(
        "a next in a snapshot page or a segment is refused, naming the file and `next`, the store unchanged",
        arguments: ["snapshot", "segment"])
    func nextIsRefused(_ where: String) async throws {
        try await Self.withFolder { store, folder in
            // The page `next` names lies in the folder: it used to be neither read nor refused.
            _ = try folder.file("more.json", #"{"version": 1, "events": [\#(Self.event("more"))]}"#)
            let next = #", "next": "more.json""#
            let page = try folder.file(
                "page-1.json", #"{"version": 1, "events": [\#(Self.event("a"))]\#(`where` == "snapshot" ? next : "")}"#)
            let segment = try folder.file(
                "segment-2-2.json",
                #"{"version": 2, "generation": "g1", "from": 2, "to": 2, "events": [\#(Self.event("b"))]\#(`where` == "segment" ? next : "")}"#
            )
            let manifest = try folder.manifest(head: 2, sequence: 1, snapshot: [page], segments: [(2, 2, segment)])
            let before = try await store.exportFeed()
            let error = await #expect(throws: FeedValidationError.self) {
                _ = try await store.sync(from: manifest, options: SyncOptions(policy: .preferRemote))
            }
            let problems = try #require(error?.problems)
            let file = folder.url.appendingPathComponent(`where` == "snapshot" ? "page-1.json" : "segment-2-2.json").path
            #expect(problems.count == 1, "\(problems)")
            #expect(problems.first?.source == file, "\(problems)")
            #expect(problems.first?.path == "next", "\(problems)")
            #expect(problems.first?.message.contains("has no next: the manifest lists every") == true, "\(problems)")
            #expect(try await store.exportFeed() == before)
            #expect(try await store.syncSources().isEmpty)
        }
    }

    /// Readers disagree on which of two same-named members counts (this one took the first):
    /// refused, as in a feed page.
    @Test(
        "a manifest that names a member twice is refused, naming it, the store unchanged",
        arguments: [("", #""head": 1, "head": 2"#), ("snapshot.files[0]", #""size": 0, "size": 0"#)])
    func duplicateManifestMembersAreRefused(_ path: String, _ members: String) async throws {
        try await Self.withFolder { store, folder in
            let page = try folder.file("page-1.json", #"{"version": 1, "events": [\#(Self.event("a"))]}"#)
            let entry = path.isEmpty ? page : page + ", " + members
            let text = #"""
                {"version": 2, "generation": "g1", \#(path.isEmpty ? members : #""head": 1"#),
                 "snapshot": {"sequence": 1, "files": [{\#(entry)}]}, "segments": []}
                """#
            let manifest = folder.url.appendingPathComponent(PublishedManifest.fileName)
            try Data(text.utf8).write(to: manifest)
            let before = try await store.exportFeed()
            let error = await #expect(throws: ManifestError.self) {
                _ = try await store.sync(from: try FeedSource(manifest.path))
            }
            #expect(error?.path == path, "\(String(describing: error))")
            #expect(error?.message.contains("appears more than once") == true, "\(String(describing: error))")
            #expect(try await store.exportFeed() == before)
            #expect(try await store.events.find("a") == nil)
        }
    }

    @Test("a null next in a published file is absent, as null is for every optional member")
    func nullNextIsAbsent() async throws {
        try await Self.withFolder { store, folder in
            let page = try folder.file("page-1.json", #"{"version": 1, "events": [\#(Self.event("a"))], "next": null}"#)
            _ = try await store.sync(from: try folder.manifest(head: 1, sequence: 1, snapshot: [page]))
            #expect(try await store.events.find("a") != nil)
        }
    }
}
