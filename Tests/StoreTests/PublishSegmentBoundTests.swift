import Foundation
import Testing

@testable import Store

/// A published folder lists no change segment larger than `PublishOptions.segmentBytes`: a
/// client fetches a segment whole, and one over its cap on a file (`SyncOptions.maximumBytes`)
/// refused the whole manifest (twenty 20 MB images added in one publish made a 533 MB segment,
/// beside a snapshot whose pages were bounded). Small bounds here: 64 KiB, records of 20 to 40 KB.
@Suite("Publish: segments within the byte bound")
struct PublishSegmentBoundTests {
    static let bound = 64 << 10

    /// The bound under test, pages cut at it too, and no snapshot refresh for any other reason
    /// (the segments' share of the snapshot), so only the bound can call for one.
    static var options: PublishOptions {
        var options = PublishOptions()
        options.segmentBytes = bound
        options.snapshotPageBytes = bound
        options.compaction.snapshotRefreshRatio = 1_000
        options.gracePeriod = 0
        return options
    }

    /// A framework of about `bytes` bytes.
    static func large(_ id: String, bytes: Int) -> Framework {
        Framework(
            id: id, name: "Large \(id)", imageName: id, urlString: "https://example.com/\(id)",
            description: String(repeating: "\(id) ", count: bytes / (id.count + 1)))
    }

    static func manifest(_ folder: URL) throws -> PublishedManifest {
        try PublishedManifest.parse(
            try Data(contentsOf: folder.appendingPathComponent(PublishedManifest.fileName)), source: "manifest")
    }

    /// The manifest is valid (`PublishedManifest.parse` checks FeedFormat's rules) and every file
    /// it names is there, with the size and SHA-256 it gives.
    static func validate(_ folder: URL) throws {
        let manifest = try manifest(folder)
        for file in manifest.files {
            let data = try Data(contentsOf: folder.appendingPathComponent(file.name))
            #expect(data.count == file.size && SHA256.hexDigest(of: data) == file.sha256, "\(file.name)")
        }
    }

    /// Syncs `replica` from the folder with a cap on a file below the oversized segment's size.
    static func sync(_ replica: Store, _ folder: URL, maximumBytes: Int) async throws -> SyncReport {
        var options = SyncOptions()
        options.policy = .preferRemote
        options.maximumBytes = maximumBytes
        return try await replica.sync(
            from: try FeedSource(folder.appendingPathComponent(PublishedManifest.fileName).path), options: options)
    }

    /// A manifest may name 100,000 files of up to 2^53 bytes: their sum saturates at Int.max
    /// instead of trapping (`reduce` with `+` did, past 1,024 such files).
    @Test("the sizes a manifest names are summed without overflow")
    func sizesSumWithoutOverflow() {
        #expect(Publisher.totalSize([1, 2, 3]) == 6)
        #expect(Publisher.totalSize([Int]()) == 0)
        #expect(Publisher.totalSize(Array(repeating: 1 << 53, count: 1_100)) == Int.max)
        #expect(Publisher.totalSize([Int.max, 1, Int.max]) == Int.max)
    }

    /// The segments kept are those the old loop kept (drop the oldest while more than one is
    /// left and they are too many or too large), found in one pass: compared on random lists.
    @Test("the newest segments kept are the ones dropping the oldest one at a time kept")
    func newestKeptAsTheLoopKeptThem() {
        func byTheLoop(_ sizes: [Int], _ maximumCount: Int, _ maximumBytes: Int) -> Int {
            var left = sizes
            while left.count > 1, left.count > maximumCount || left.reduce(0, +) > maximumBytes { left.removeFirst() }
            return left.count
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let sizes = (0..<Int.random(in: 0...20, using: &generator)).map { _ in Int.random(in: 0...100, using: &generator) }
            let maximumCount = Int.random(in: 0...25, using: &generator)
            let maximumBytes = Int.random(in: 0...1_500, using: &generator)
            #expect(
                Publisher.newestKept(sizes: sizes, maximumCount: maximumCount, maximumBytes: maximumBytes)
                    == byTheLoop(sizes, maximumCount, maximumBytes), "\(sizes) \(maximumCount) \(maximumBytes)")
        }
        #expect(
            Publisher.newestKept(sizes: Array(repeating: 1 << 53, count: 2_000), maximumCount: 100_000, maximumBytes: .max)
                == 1_023)
    }

    @Test("a publish whose segment is over the bound writes a snapshot at head instead; old and new clients sync")
    func oversizedSegmentBecomesASnapshot() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("published", isDirectory: true)
            try await source.frameworks.insert(["a", "b"].map { Fixtures.framework($0) })
            _ = try await source.publish(to: folder, options: Self.options)
            let behind = try await Store.open(at: directory.file("behind.sqlite"))
            _ = try await Self.sync(behind, folder, maximumBytes: 100 << 10)

            // Three records of 40 KB in one publish: a segment of about 120 KB.
            try await source.frameworks.insert(["x", "y", "z"].map { Self.large($0, bytes: 40_000) })
            _ = try await source.frameworks.delete("a")
            let report = try await source.publish(to: folder, options: Self.options)
            #expect(report.outcome == .snapshot, "\(report)")
            #expect(report.reason?.contains("larger than the bound of \(Self.bound) bytes per segment") == true, "\(report)")

            let manifest = try Self.manifest(folder)
            #expect(manifest.segments.allSatisfy { $0.file.size <= Self.bound }, "\(manifest.segments)")
            #expect(manifest.snapshotSequence == manifest.head && manifest.head == 2 && manifest.segments.isEmpty)
            try Self.validate(folder)

            // Both under a cap of 100 KiB per file, which the 120 KB segment was over.
            let caughtUp = try await Self.sync(behind, folder, maximumBytes: 100 << 10)
            #expect(
                caughtUp.published?.fullSyncReason
                    == "the store's cursor (1) is older than the snapshot (at 2), and the manifest lists no segment",
                "\(String(describing: caughtUp.published))")
            #expect(try await behind.exportFeed() == source.exportFeed())
            let fresh = try await Store.open(at: directory.file("fresh.sqlite"))
            let full = try await Self.sync(fresh, folder, maximumBytes: 100 << 10)
            #expect(full.published?.fullSyncReason == "no cursor for this source yet")
            #expect(try await fresh.exportFeed() == source.exportFeed())
            await behind.close()
            await fresh.close()
        }
    }

    @Test("compaction does not merge two segments into one over the bound; clients at any cursor sync")
    func mergeStaysWithinTheBound() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("published", isDirectory: true)
            // A snapshot of 200 KB, so that 80 KB of segments does not outweigh it.
            try await source.frameworks.insert((0..<10).map { Self.large("base-\($0)", bytes: 20_000) })
            _ = try await source.publish(to: folder, options: Self.options)
            let early = try await Store.open(at: directory.file("early.sqlite"))
            _ = try await Self.sync(early, folder, maximumBytes: 100 << 10)

            // One record of 20 KB per publish: [2,2]+[3,3] merge into 40 KB, so do [4,4]+[5,5];
            // the two of those would make 80 KB.
            var middle: Store?
            for step in 2...5 {
                try await source.frameworks.insert(Self.large("step-\(step)", bytes: 20_000))
                let report = try await source.publish(to: folder, options: Self.options)
                #expect(report.outcome == .segment, "\(report)")
                if step == 3 {
                    let store = try await Store.open(at: directory.file("middle.sqlite"))
                    _ = try await Self.sync(store, folder, maximumBytes: 100 << 10)
                    middle = store
                }
            }
            let manifest = try Self.manifest(folder)
            #expect(manifest.segments.allSatisfy { $0.file.size <= Self.bound }, "\(manifest.segments)")
            #expect(manifest.segments.map { [$0.from, $0.to] } == [[2, 3], [4, 5]], "\(manifest.segments)")
            #expect(manifest.snapshotSequence == 1 && manifest.head == 5)
            try Self.validate(folder)

            let expected = try await source.exportFeed()
            for replica in [early, middle!] {
                let report = try await Self.sync(replica, folder, maximumBytes: 100 << 10)
                #expect(report.published?.fullSyncReason == nil, "\(String(describing: report.published))")
                #expect(try await replica.exportFeed() == expected)
            }
            await middle?.close()
            let fresh = try await Store.open(at: directory.file("fresh.sqlite"))
            _ = try await Self.sync(fresh, folder, maximumBytes: 100 << 10)
            #expect(try await fresh.exportFeed() == expected)
            await early.close()
            await fresh.close()
        }
    }

    /// A folder published without the bound (by an earlier version, or with a larger
    /// `segmentBytes` than a client's cap) may list a segment over the client's cap that ends
    /// at the snapshot. A full sync reads the snapshot and the segments after it, never that
    /// one: refusing the whole manifest over it refused a sync that did not need it. A client
    /// whose cursor needs it is still refused, by name.
    @Test("a segment over the client's cap that its sync does not read does not refuse the manifest; one it reads does")
    func onlyTheFilesReadAreCapped() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("published", isDirectory: true)
            var unbounded = Self.options
            unbounded.segmentBytes = .max
            try await source.frameworks.insert(["a", "b"].map { Fixtures.framework($0) })
            _ = try await source.publish(to: folder, options: unbounded)
            let behind = try await Store.open(at: directory.file("behind.sqlite"))
            _ = try await Self.sync(behind, folder, maximumBytes: 100 << 10)
            try await source.frameworks.insert(["x", "y", "z"].map { Self.large($0, bytes: 40_000) })
            _ = try await source.publish(to: folder, options: unbounded)
            // A snapshot at the head, the 120 KB segment kept before it (merged with the new one).
            try await source.frameworks.update(Fixtures.framework("a", name: "A 2"))
            unbounded.compaction.snapshotRefreshRatio = 0
            _ = try await source.publish(to: folder, options: unbounded)
            let manifest = try Self.manifest(folder)
            #expect(manifest.snapshotSequence == manifest.head, "\(manifest)")
            #expect(manifest.segments.count == 1 && manifest.segments[0].file.size > 100 << 10, "\(manifest.segments)")

            let fresh = try await Store.open(at: directory.file("fresh.sqlite"))
            let full = try await Self.sync(fresh, folder, maximumBytes: 100 << 10)
            #expect(full.published?.fullSyncReason == "no cursor for this source yet")
            #expect(try await fresh.exportFeed() == source.exportFeed())
            await fresh.close()

            let error = await #expect(throws: ManifestError.self) {
                _ = try await Self.sync(behind, folder, maximumBytes: 100 << 10)
            }
            #expect(error?.path == "segments[0].size", "\(String(describing: error))")
            #expect(
                error?.message.hasSuffix("is larger than the limit of 102400 bytes per file") == true,
                "\(String(describing: error))")
            await behind.close()
        }
    }
}
