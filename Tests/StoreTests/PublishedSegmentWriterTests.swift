import Foundation
import Testing

@testable import Store

/// A publish writes its new segment a record at a time (`PublishedSegmentWriter`), reading each
/// value as it goes and stopping once the segment is over `PublishOptions.segmentBytes`, where
/// it built the whole segment in memory first. What it publishes must not change: a segment
/// has the bytes the feed format gives (`goldenBytes`; the writer is also the encoder of
/// `PublishedSegment.encoded`, which a merge uses), its bound is exact, and an oversized one
/// leaves the folder a publish with a snapshot at the head leaves.
@Suite("Publish: the new segment written a record at a time")
struct PublishedSegmentWriterTests {
    static let kinds = RecordKinds.builtIn.map(\.kind)

    /// Keys SQLite tells apart and JSON escapes: quotes, backslashes, control characters, `é`
    /// written NFC and NFD, non-ASCII ordered by bytes.
    static let awkwardKeys = [
        "plain", "with \"quotes\"", #"back\slash"#, "tab\tand\nnewline", "\u{1}", "\u{E9}", "e\u{301}", "zz", "Ω", "🙂",
    ]

    /// What the writer gives for `segment`'s changes, their values read from it.
    static func written(_ segment: PublishedSegment, limit: Int) -> PublishedSegmentWriter.Outcome {
        var keys: [RecordKind: Set<ExactKey>] = [:]
        for (kind, values) in segment.records { keys[kind, default: []].formUnion(values.keys) }
        for (kind, deleted) in segment.deleted { keys[kind, default: []].formUnion(deleted) }
        let writer = PublishedSegmentWriter(generation: "g-1", from: 3, to: 3, kinds: kinds, limit: limit)
        return writer.write(keys: keys) { kind, key in segment.records[kind]?[ExactKey(key)] }
    }

    @Test("the same bytes as the whole-segment encoder, and over the bound exactly when its document is")
    func sameBytesAsTheEncoder() throws {
        var segments: [PublishedSegment] = [PublishedSegment()]
        var mixed = PublishedSegment()
        for (index, key) in Self.awkwardKeys.enumerated() {
            mixed.put(.framework, key, .object([JSONMember("id", .string(key)), JSONMember("name", .string("N \(index)"))]))
            mixed.delete(.event, "gone-" + key)
            if index % 2 == 0 { mixed.delete(.framework, "deleted-" + key) }
        }
        mixed.put(.image, "https://example.com/a.png", .object([JSONMember("url", .string("https://example.com/a.png"))]))
        segments.append(mixed)
        var tombstonesOnly = PublishedSegment()
        for key in Self.awkwardKeys { tombstonesOnly.delete(.order, key) }
        segments.append(tombstonesOnly)
        var many = PublishedSegment()
        for index in (0..<2_000).reversed() {
            let key = "fw-\(index)"
            if index % 7 == 0 {
                many.delete(.framework, key)
            } else {
                many.put(.framework, key, .object([JSONMember("id", .string(key)), JSONMember("n", .integer(index))]))
            }
        }
        segments.append(many)

        for segment in segments {
            let expected = segment.encoded(generation: "g-1", from: 3, to: 3, kinds: Self.kinds)
            #expect(Self.written(segment, limit: .max) == .fits(expected))
            #expect(Self.written(segment, limit: expected.count) == .fits(expected))
            let over = Self.written(segment, limit: expected.count - 1)
            guard case .oversized(let bytes) = over else {
                Issue.record("\(expected.count) bytes fit under \(expected.count - 1)")
                continue
            }
            #expect(bytes > expected.count - 1 && bytes <= expected.count)
            if case .oversized(let bytes) = Self.written(segment, limit: expected.count / 2) {
                #expect(bytes > expected.count / 2)
            } else {
                Issue.record("fits under half its size")
            }
        }
    }

    /// The segment file a publish wrote is the one the whole-segment encoder makes of the
    /// changed records' current values.
    @Test("a published segment is the whole-segment encoder's document of the changed records")
    func publishedSegmentIsTheEncodersDocument() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("published", isDirectory: true)
            try await source.frameworks.insert((0..<50).map { Fixtures.framework("fw-\($0)") })
            try await source.events.insert(Event(id: "ev-1", title: "E", date: CalendarDate("2026-01-01")!))
            _ = try await source.publish(to: folder, options: PublishSegmentBoundTests.options)

            try await source.frameworks.insert(Self.awkwardKeys.map { Fixtures.framework($0) })
            for index in 0..<10 { try await source.frameworks.update(Fixtures.framework("fw-\(index)", name: "changed")) }
            for index in 40..<45 { _ = try await source.frameworks.delete("fw-\(index)") }
            _ = try await source.events.delete("ev-1")
            try await source.orders.insert(Fixtures.order("o-1", prices: ["1.50"]))
            let report = try await source.publish(to: folder, options: PublishSegmentBoundTests.options)
            #expect(report.outcome == .segment, "\(report)")
            #expect(report.changes == Self.awkwardKeys.count + 10 + 5 + 1 + 1, "\(report)")

            let manifest = try PublishSegmentBoundTests.manifest(folder)
            let segment = try #require(manifest.segments.last)
            #expect(segment.from == 2 && segment.to == 2)
            var expected = PublishedSegment()
            let changed: [(RecordKind, String)] =
                Self.awkwardKeys.map { (.framework, $0) } + (0..<10).map { (.framework, "fw-\($0)") }
                + (40..<45).map { (.framework, "fw-\($0)") } + [(.event, "ev-1"), (.order, "o-1")]
            for (kind, key) in changed {
                let handler = try #require(RecordKinds.builtIn.first { $0.kind == kind })
                if let value = try await source.read({ db in try handler.feedValue(of: key, in: db) }) {
                    expected.put(kind, key, value)
                } else {
                    expected.delete(kind, key)
                }
            }
            let bytes = expected.encoded(generation: manifest.generation, from: 2, to: 2, kinds: Self.kinds)
            let data = try Data(contentsOf: folder.appendingPathComponent(segment.file.name))
            #expect(data == bytes)
            #expect(
                segment.file.name == PublishedFileName.segment(from: 2, to: 2, sha256: SHA256.hexDigest(of: bytes))
                    && segment.file.size == bytes.count)
            try PublishSegmentBoundTests.validate(folder)
        }
    }

    /// A segment over the bound is not finished: the publish writes the snapshot at the head a
    /// publish that lists its segment and refreshes the snapshot writes (the same pages, the
    /// same tombstones, among them keys past where the segment stopped), and lists no segment.
    @Test("an oversized segment leaves the snapshot a forced refresh writes, tombstones included, and no segment")
    func oversizedSegmentLeavesTheSameSnapshot() async throws {
        try await withTemporaryStore { source, directory in
            let bounded = directory.url.appendingPathComponent("bounded", isDirectory: true)
            let refreshed = directory.url.appendingPathComponent("refreshed", isDirectory: true)
            var refresh = PublishSegmentBoundTests.options
            refresh.segmentBytes = .max
            refresh.compaction.snapshotRefreshRatio = 0
            try await source.frameworks.insert((0..<20).map { Fixtures.framework("fw-\($0)") })
            try await source.events.insert(Event(id: "ev-1", title: "E", date: CalendarDate("2026-01-01")!))
            for folder in [bounded, refreshed] { _ = try await source.publish(to: folder, options: refresh) }
            _ = try await source.frameworks.delete("fw-0")
            for folder in [bounded, refreshed] { _ = try await source.publish(to: folder, options: refresh) }

            // 120 KB of records first in key order, then deletions after them, and of a later kind.
            try await source.frameworks.insert(["a", "b", "c"].map { PublishSegmentBoundTests.large($0, bytes: 40_000) })
            for index in 10..<15 { _ = try await source.frameworks.delete("fw-\(index)") }
            _ = try await source.events.delete("ev-1")
            let report = try await source.publish(to: bounded, options: PublishSegmentBoundTests.options)
            _ = try await source.publish(to: refreshed, options: refresh)
            #expect(report.outcome == .snapshot, "\(report)")
            #expect(
                report.reason?.contains("larger than the bound of \(PublishSegmentBoundTests.bound) bytes per segment") == true,
                "\(report)")
            #expect(report.changes == 3 + 5 + 1, "\(report)")

            let oversized = try PublishSegmentBoundTests.manifest(bounded)
            let reference = try PublishSegmentBoundTests.manifest(refreshed)
            #expect(oversized.segments.isEmpty && oversized.head == 3 && oversized.snapshotSequence == 3)
            #expect(reference.head == 3 && reference.snapshotSequence == 3)
            #expect(oversized.snapshotFiles == reference.snapshotFiles)
            let tombstones = try Data(
                contentsOf: bounded.appendingPathComponent(try #require(oversized.snapshotFiles.last).name))
            let deleted = try PublishedSegment.parse(tombstones, source: "deleted", kinds: Self.kinds).deleted
            #expect(deleted[.framework] == Set((["fw-0"] + (10..<15).map { "fw-\($0)" }).map(ExactKey.init)))
            #expect(deleted[.event] == [ExactKey("ev-1")])
            try PublishSegmentBoundTests.validate(bounded)
        }
    }
}

extension PublishedSegmentWriterTests {
    /// The segment document's bytes are the feed format's public contract (FeedFormat.md,
    /// version 2): clients of any version parse them, and a segment's name is their digest.
    @Test("a segment's bytes, as published: members in order, keys by their bytes, escapes")
    func goldenBytes() throws {
        var segment = PublishedSegment()
        segment.put(.framework, "b\u{E9}", .object([JSONMember("id", .string("b\u{E9}")), JSONMember("n", .integer(2))]))
        segment.put(.framework, "a \"q\"\t", .object([JSONMember("id", .string("a \"q\"\t")), JSONMember("n", .integer(1))]))
        segment.put(.image, "https://e.com/i.png", .object([JSONMember("url", .string("https://e.com/i.png"))]))
        segment.delete(.event, "e\u{301}")
        segment.delete(.event, "d")
        segment.delete(.order, "\u{1}")
        let bytes = segment.encoded(generation: "g-1", from: 3, to: 4, kinds: Self.kinds)
        // Compared as bytes: Swift's `String ==` takes `é` as U+00E9 and as e with U+0301 for one.
        let expected =
            #"{"version":2,"generation":"g-1","from":3,"to":4,"#
            + #""frameworks":[{"id":"a \"q\"\t","n":1},{"id":"b\#u{E9}","n":2}],"orders":[],"events":[],"#
            + #""images":[{"url":"https://e.com/i.png"}],"#
            + #""deleted":{"frameworks":[],"orders":["\u0001"],"events":["d","e\#u{301}"],"images":[]}}"# + "\n"
        #expect(Array(bytes) == Array(expected.utf8), "\(String(decoding: bytes, as: UTF8.self))")
    }
}
