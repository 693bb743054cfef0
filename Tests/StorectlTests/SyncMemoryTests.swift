import Foundation
import Testing

#if os(Linux)
    private let peaksReadAsLinuxReportsThem = true
#else
    private let peaksReadAsLinuxReportsThem = false
#endif

/// What a sync holds per record until its commit (the change list, the change log's text) must
/// not depend much on the kind: an event costs what a framework does, plus its date. Each kept
/// its date in a dictionary of one-element arrays, about 130 bytes more, and the change log's
/// buffer grew by doubling past it: 1,000,000 events peaked at 317 MB where as many frameworks
/// took 93 MB (the README's limit for a sync is 256 MiB). Measured as the OS counts it: the
/// peak resident set of the storectl process (`getrusage` of the child, through python3, as the
/// benchmark's memory rows do), for two feeds alike but for their kind; the difference, per
/// record, is the kind's cost: with the fix 89 bytes in a release build and 178 in a debug one
/// (mostly the log's 78-byte element and SQLite's copy of it in the row it inserts), without it
/// 246 and 267. The test counts large blocks as they are live (`largeBlocksUnmapped`, debug
/// storectl): 84 bytes with the fix, 176 with the dates kept in a dictionary. A mapped buffer
/// then grows in place (`mremap`), so the doubling no longer shows in the peak:
/// `ChangeLogFormatTests` holds that the log's text is sized before it is written.
///
/// Linux only: the peaks are read as Linux reports them (`ru_maxrss` in KiB, where macOS gives
/// bytes; a process's `/proc/PID/status`, which macOS does not have).
@Suite("Sync memory per record", .enabled(if: peaksReadAsLinuxReportsThem, "reads peak memory as Linux reports it"))
struct SyncMemoryTests {
    static let records = 300_000

    /// `storectl arguments...` expected to fail, run with at most `addressSpace` bytes of
    /// virtual memory (a regression then ends in an allocation failure, not in swapping the
    /// machine): its exit status, stderr and peak resident bytes.
    static func failureWithPeak(
        _ storectl: Storectl, _ arguments: [String], addressSpace: Int
    ) async throws -> (status: Int32, stderr: String, peak: Int) {
        let script =
            #"exec python3 -c 'import resource, subprocess, sys; limit = int(sys.argv[1]); r = subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit))); sys.stderr.buffer.write(r.stderr); print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$0" "$@""#
        let result = try await storectl.run(
            ["-c", script, String(addressSpace), try Storectl.executableURL().path] + arguments, shell: true, timeout: 300)
        let fields = result.stdout.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        #expect(fields.count == 2, "no status and peak read: \(result)")
        guard fields.count == 2 else { return (-1, result.stderr, 0) }
        return (Int32(truncatingIfNeeded: fields[0]), result.stderr, fields[1] * 1024)
    }

    /// A feed page or manifest of values a tree multiplies (the text `{},` takes 3 bytes, an
    /// object in the tree took 376) is refused once it passes a million values, before the
    /// tree takes the memory: a 30 MB page of empty objects as an order's items took more than
    /// 3.7 GB, a 16 MB manifest of them 2.1 GB. Each is refused naming the file and where, and
    /// no store is left behind. Bounded by the file's bytes (a record is held whole) plus 100
    /// MB (storectl itself, and at most a million values), under a 3 GB address space. Here a
    /// 12 MB page of 4 million `{}` and a 12 MB manifest of 3 million `[0]`: built whole, about
    /// 140 and 300 MB at today's sizes (1.5 GB and more when an object reserved 8 members).
    @Test("a page or a manifest of millions of small values is refused in bounded memory, naming the file and where")
    func valuesATreeWouldMultiplyAreRefused() async throws {
        let storectl = try Storectl()
        func repeated(_ text: String, _ count: Int) -> Data {
            var data = Data(capacity: count * (text.utf8.count + 1))
            data.append(Data(text.utf8))
            for _ in 1..<count { data.append(Data(("," + text).utf8)) }
            return data
        }
        let page = try storectl.directory.write(
            Data(#"{"version": 1, "orders": [{"id": "o", "placedAt": "2026-11-20T09:30:00Z", "items": ["#.utf8)
                + repeated("{}", 4_000_000) + Data("]}]}".utf8),
            to: "page.json")
        // Under the 16 MiB a manifest may take.
        let manifest = try storectl.directory.write(
            Data(#"{"version": 2, "generation": "g", "head": 1, "segments": [], "other": ["#.utf8)
                + repeated("[0]", 3_000_000) + Data("]}".utf8),
            to: "manifest.json")
        for (path, fragment) in [
            (page, "\(page): orders[0]: holds more than 1000000 JSON values (reached in its member 'items')"),
            (manifest, "\(manifest): the manifest holds more than 1000000 JSON values"),
        ] {
            let db = storectl.directory.path + "/refused.sqlite"
            let (status, stderr, peak) = try await Self.failureWithPeak(
                storectl, ["sync", path, "--db", db], addressSpace: 3 << 30)
            print("SyncMemoryTests: \(URL(fileURLWithPath: path).lastPathComponent) refused at \(peak >> 20) MiB")
            #expect(status == 1, "\(stderr)")
            #expect(stderr.contains(fragment), "\(stderr)")
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            #expect(peak < size + 100_000_000, "\(peak) for \(size) bytes")
            #expect(!FileManager.default.fileExists(atPath: db))
        }
    }

    /// A record's problems are counted, but only the first hundred are kept with their text
    /// (all a feed's error lists show): an order of 100,000 items, each naming a member nine
    /// times, reports 1,099,989 problems, whose paths and messages took 288 MB (debug storectl)
    /// for a 5.6 MB page, for the validator to drop all but a hundred; now 83 MB. The count is
    /// still the whole one.
    @Test("a record of a million problems is refused in bounded memory, its problems counted")
    func problemsOfOneRecordAreCountedNotKept() async throws {
        let storectl = try Storectl()
        let item = #"{"a": 0, "a": 0, "a": 0, "a": 0, "a": 0, "a": 0, "a": 0, "a": 0, "a": 0}"#
        let items = Array(repeating: item, count: 99_999).joined(separator: ",")
        let page = try storectl.directory.write(
            Data(#"{"version": 1, "orders": [{"id": "o", "placedAt": "2026-11-20T09:30:00Z", "items": [\#(items)]}]}"#.utf8),
            to: "page.json")
        let db = storectl.directory.path + "/refused.sqlite"
        let (status, stderr, peak) = try await Self.failureWithPeak(storectl, ["sync", page, "--db", db], addressSpace: 3 << 30)
        print("SyncMemoryTests: an order of 1,099,989 problems refused at \(peak >> 20) MiB")
        #expect(status == 1, "\(stderr)")
        #expect(stderr.contains("the feed has 1099989 problems"), "\(stderr)")
        #expect(stderr.contains("\(page): orders[0].items[0]: the member 'a' appears more than once"), "\(stderr)")
        let size = try FileManager.default.attributesOfItem(atPath: page)[.size] as? Int ?? 0
        #expect(peak < size + 120_000_000, "\(peak) for \(size) bytes")
    }

    /// A local feed's image url is checked by its path with `.` and `..` resolved: the path was
    /// split into an array of its parts, and those kept in another, 64 bytes a part: a url of
    /// five million `a/` (a 10 MB page) peaked at 524 MB (debug storectl), 20 MB at 1 GB. Now one
    /// buffer of the path's bytes: 156 MB, most of it the url's copies (the page, the string,
    /// its URL and path, the rows that store it as a key).
    @Test("a local feed's image url of millions of parts is checked in bounded memory")
    func imageURLOfManyPartsIsCheckedInBoundedMemory() async throws {
        let storectl = try Storectl()
        let url = String(repeating: "a/", count: 5_000_000) + "i.png"
        let page = try storectl.directory.write(
            Data(#"{"version": 1, "images": [{"url": "\#(url)", "data": "AAAA"}]}"#.utf8), to: "page.json")
        let db = storectl.directory.path + "/store.sqlite"
        let peak = try await Self.peakResidentBytes(storectl, ["sync", page, "--db", db, "--quiet"])
        print("SyncMemoryTests: an image url of 5,000,000 parts synced at \(peak >> 20) MiB")
        let size = try FileManager.default.attributesOfItem(atPath: page)[.size] as? Int ?? 0
        #expect(peak < 25 * size, "\(peak) for \(size) bytes")
    }

    /// Peak resident bytes of `storectl arguments...`.
    ///
    /// `largeBlocksUnmapped`: glibc's malloc is given a fixed mmap threshold of 128 KiB
    /// (`MALLOC_MMAP_THRESHOLD_`), which turns its dynamic threshold off. By default, freeing a
    /// mapped block raises the threshold to its size (up to 32 MiB), and later blocks that size
    /// come from a thread's arena, where a freed one may stay, unused by the next request from
    /// another thread or a few bytes larger. Fixed, every block of 128 KiB or more is mapped on
    /// its own and unmapped when freed: the peak counts the large blocks live at once, not
    /// what the allocator kept. For records of tens of MB, where one kept block is the whole
    /// difference measured: CI once read 179 MiB against 152 for two publishes whose large
    /// blocks are the same (28.6 MB, one copy of their 30 MB record), where this machine reads
    /// 152 and 152 every time. A buffer grown by doubling is then moved by `mremap`, not
    /// copied: what its doubling costs no longer shows.
    static func peakResidentBytes(
        _ storectl: Storectl, _ arguments: [String], largeBlocksUnmapped: Bool = false
    ) async throws -> Int {
        let script =
            (largeBlocksUnmapped ? "MALLOC_MMAP_THRESHOLD_=131072 " : "")
            + #"exec python3 -c 'import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$0" "$@""#
        let result = try await storectl.run(
            ["-c", script, try Storectl.executableURL().path] + arguments, shell: true, timeout: 300)
        expectSuccess(result)
        let kilobytes = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        #expect(kilobytes > 0, "no peak read: \(result.stdout) \(result.stderr)")
        return kilobytes * 1024
    }

    /// A feed of `count` frameworks, `f-0`... ; with `step` above 0, every `step`-th one's name
    /// is changed (synced three-way over the unchanged feed: a conflict each).
    static func frameworks(_ count: Int, changingEvery step: Int) -> Data {
        var data = Data(#"{"version": 1, "frameworks": ["#.utf8)
        for index in 0..<count {
            let name = step > 0 && index % step == 0 ? "changed" : "F"
            data.append(
                Data(
                    #"\#(index == 0 ? "" : ","){"id": "f-\#(index)", "name": "\#(name)", "imageName": "f", "urlString": "u", "description": "d"}"#
                        .utf8))
        }
        data.append(Data("]}".utf8))
        return data
    }

    /// `count` frameworks synced into `storectl`'s store, then copied to one store per name in
    /// `copies` (their paths, in order); and the path of a feed of the same frameworks, every
    /// other one renamed: synced three-way into a copy, a conflict each.
    static func storesToConflictWith(
        _ storectl: Storectl, _ count: Int, copies names: [String]
    ) async throws -> (halfChanged: String, copies: [String]) {
        let original = try storectl.directory.write(Self.frameworks(count, changingEvery: 0), to: "original.json")
        let halfChanged = try storectl.directory.write(Self.frameworks(count, changingEvery: 2), to: "half.json")
        expectSuccess(try await storectl.run(["sync", original, "--quiet"], timeout: 300))
        let copies = names.map { storectl.directory.path + "/\($0).sqlite" }
        for copy in copies { try FileManager.default.copyItem(atPath: storectl.db, toPath: copy) }
        return (halfChanged, copies)
    }

    @Test("an event held until the commit costs at most 130 bytes more than a framework")
    func eventsCostAboutWhatFrameworksDo() async throws {
        let storectl = try Storectl()
        var events = Data(#"{"version": 1, "events": ["#.utf8)
        var frameworks = Data(#"{"version": 1, "frameworks": ["#.utf8)
        for index in 0..<Self.records {
            let comma = index == 0 ? "" : ","
            events.append(
                Data(#"\#(comma){"id": "e-\#(index)", "title": "T", "date": "2026-06-\#(10 + index % 19)"}"#.utf8))
            frameworks.append(
                Data(
                    #"\#(comma){"id": "f-\#(index)", "name": "F", "imageName": "f", "urlString": "u", "description": "d"}"#.utf8))
        }
        events.append(Data("]}".utf8))
        frameworks.append(Data("]}".utf8))
        let eventsFeed = try storectl.directory.write(events, to: "events.json")
        let frameworksFeed = try storectl.directory.write(frameworks, to: "frameworks.json")

        let eventsPeak = try await Self.peakResidentBytes(
            storectl, ["sync", eventsFeed, "--quiet", "--db", storectl.directory.path + "/events.sqlite"],
            largeBlocksUnmapped: true)
        let frameworksPeak = try await Self.peakResidentBytes(
            storectl, ["sync", frameworksFeed, "--quiet", "--db", storectl.directory.path + "/frameworks.sqlite"],
            largeBlocksUnmapped: true)
        let perRecord = (eventsPeak - frameworksPeak) / Self.records
        print(
            "SyncMemoryTests: \(Self.records) events \(eventsPeak >> 20) MiB, frameworks \(frameworksPeak >> 20) MiB: \(perRecord) bytes more an event"
        )
        #expect(perRecord < 130, "events \(eventsPeak) bytes, frameworks \(frameworksPeak) bytes at their peak")
    }

    /// A three-way sync reporting a conflict for half of its records prints each, and holds the
    /// report's conflicts; its lines made into one text, then that text's bytes, took about 300
    /// bytes a conflict more (1,000,000 records, half differing: 332 MB against keep-existing's
    /// 61 MB; written a line at a time, 183 MB). Against keep-existing on the same store and feed;
    /// here, with a debug storectl, 503 bytes a conflict before and 129 after.
    @Test("a conflict reported costs at most 300 bytes")
    func conflictsAreWrittenAsTheyAreRendered() async throws {
        let storectl = try Storectl()
        let count = 200_000
        let (halfChanged, copies) = try await Self.storesToConflictWith(storectl, count, copies: ["three-way", "keep-existing"])

        let threeWay = try await Self.peakResidentBytes(
            storectl, ["sync", halfChanged, "--quiet", "--policy", "three-way", "--db", copies[0]])
        let keepExisting = try await Self.peakResidentBytes(
            storectl, ["sync", halfChanged, "--quiet", "--policy", "keep-existing", "--db", copies[1]])
        let perConflict = (threeWay - keepExisting) / (count / 2)
        print(
            "SyncMemoryTests: \(count / 2) conflicts: three-way \(threeWay >> 20) MiB, keep-existing \(keepExisting >> 20) MiB: \(perConflict) bytes a conflict"
        )
        #expect(perConflict < 300, "three-way \(threeWay) bytes, keep-existing \(keepExisting) bytes at their peak")
    }

    /// `sync --json` writes its report as it serializes it, a conflict at a time, through the
    /// buffer the text report is written through: it built the whole report as a `JSONValue`
    /// tree, then one text, then that text's bytes, each holding every conflict again. The same
    /// three-way sync as above, on two copies of the store: with `--json` against the text report
    /// (itself written a line at a time), so the difference, per conflict, is what the JSON report
    /// holds that the text does not.
    @Test("a conflict reported as JSON costs at most 150 bytes more than as text")
    func jsonConflictsAreWrittenAsTheyAreSerialized() async throws {
        let storectl = try Storectl()
        let count = 200_000
        let (halfChanged, copies) = try await Self.storesToConflictWith(storectl, count, copies: ["json", "text"])

        let threeWay = ["sync", halfChanged, "--quiet", "--policy", "three-way"]
        let json = try await Self.peakResidentBytes(storectl, threeWay + ["--json", "--db", copies[0]])
        let text = try await Self.peakResidentBytes(storectl, threeWay + ["--db", copies[1]])
        let perConflict = (json - text) / (count / 2)
        print(
            "SyncMemoryTests: \(count / 2) conflicts: --json \(json >> 20) MiB, text \(text >> 20) MiB: \(perConflict) bytes a conflict more as JSON"
        )
        #expect(perConflict < 150, "--json \(json) bytes, text \(text) bytes at their peak")
    }

    /// Images with inline data cross from the reader thread to the writer in batches cut by
    /// their bytes too (`FeedPipeline.batchImageBytes`): cut by count alone (256 records), every
    /// image of a feed was held between the two threads at once, so a sync's peak grew with the
    /// feed's images (forty of 10 MB: 496 MB; ten: 202 MB). Here 12 and 48 images of 3 MB: the
    /// second's peak may exceed the first's by at most 40 MB (debug storectl: 108 MB more without
    /// the cut by bytes, 4 MB with it). The images' blocks cross threads, so they are counted as
    /// they are live, not as each thread's arena keeps them (`largeBlocksUnmapped`).
    @Test("a feed of four times as many images peaks at most 40 MB higher")
    func imagesInFlightAreBoundedByBytes() async throws {
        let storectl = try Storectl()
        let imageBytes = 3_000_000
        func feed(images count: Int) throws -> String {
            var data = Data(#"{"version": 1, "images": ["#.utf8)
            for index in 0..<count {
                let bytes = Data(repeating: UInt8(index % 251), count: imageBytes).base64EncodedString()
                data.append(
                    Data(
                        #"\#(index == 0 ? "" : ","){"url": "https://example.com/\#(index).png", "contentType": "image/png", "data": "\#(bytes)"}"#
                            .utf8))
            }
            data.append(Data("]}".utf8))
            return try storectl.directory.write(data, to: "images-\(count).json")
        }
        var peaks: [Int] = []
        for count in [12, 48] {
            let path = try feed(images: count)
            peaks.append(
                try await Self.peakResidentBytes(
                    storectl,
                    [
                        "sync", path, "--quiet", "--max-bytes", "1GiB", "--db",
                        storectl.directory.path + "/images-\(count).sqlite",
                    ],
                    largeBlocksUnmapped: true))
            try FileManager.default.removeItem(atPath: path)
        }
        print("SyncMemoryTests: 12 images of 3 MB \(peaks[0] >> 20) MiB, 48 \(peaks[1] >> 20) MiB")
        #expect(peaks[1] - peaks[0] < 40_000_000, "\(peaks)")
    }

    /// A publish whose new segment is over `--segment-bytes` drops it for a snapshot at the head:
    /// merging it first with the segment before (a publish after a publish) parsed both and wrote
    /// the merge, over the bound too, only to drop it: about twice the segment's size more at
    /// the peak (a 60 MB segment: 350 MB against 232 MB) and half the publish's time. Against
    /// the same publish into a folder with no segment to merge with; a record of 30 MB, a bound of
    /// 16 MiB. The large blocks are counted as they are live, not as the allocator keeps them
    /// (`largeBlocksUnmapped`).
    @Test("a segment over the bound is not merged before it is dropped: at most 15 MB more than with nothing to merge")
    func anOversizedSegmentIsNotMerged() async throws {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 2000)
        let merging = cli.directory.path + "/merging", alone = cli.directory.path + "/alone"
        expectSuccess(try await cli.run(["--db", "src.sqlite", "publish", merging]))
        expectSuccess(
            try await cli.run([
                "--db", "src.sqlite", "frameworks", "add", "--id", "small", "--name", "S", "--image-name", "s", "--url",
                "https://example.com/s", "--description", "d",
            ]))
        // [2,2] in one folder, a snapshot at 1 in the other: the next publish's segment
        // covers as many publishes as [2,2], so it is merged with it, where there is one.
        expectSuccess(try await cli.run(["--db", "src.sqlite", "publish", merging]))
        expectSuccess(try await cli.run(["--db", "src.sqlite", "publish", alone]))
        #expect((try PublishTests.manifest(merging)["segments"] as? [Any])?.count == 1)

        let big =
            #"{"id": "big", "name": "B", "imageName": "b", "urlString": "https://example.com/b", "description": "\#(String(repeating: "x", count: 30_000_000))"}"#
        let feed = PublishTests.feed(frameworks: 2000).replacingOccurrences(
            of: #""frameworks": ["#, with: #""frameworks": [\#(big),"#)
        let feedPath = try cli.directory.write(Data(feed.utf8), to: "big.json")
        expectSuccess(
            try await cli.run(["--db", "src.sqlite", "sync", feedPath, "--quiet", "--max-bytes", "1GiB"], timeout: 300))
        try FileManager.default.removeItem(atPath: feedPath)

        let src = cli.directory.path + "/src.sqlite"
        let bound = ["--segment-bytes", "16MiB"]
        let withMerge = try await Self.peakResidentBytes(
            cli, ["--db", src, "publish", merging] + bound, largeBlocksUnmapped: true)
        let withoutMerge = try await Self.peakResidentBytes(
            cli, ["--db", src, "publish", alone] + bound, largeBlocksUnmapped: true)
        print(
            "SyncMemoryTests: publish of a 30 MB segment: \(withMerge >> 20) MiB after a segment, \(withoutMerge >> 20) MiB alone"
        )
        for folder in [merging, alone] {
            let manifest = try PublishTests.manifest(folder)
            #expect((manifest["segments"] as? [Any])?.isEmpty == true, "\(manifest)")
        }
        #expect(withMerge - withoutMerge < 15_000_000, "after a segment \(withMerge) bytes, alone \(withoutMerge) bytes")
    }

    /// A publish writes its new segment a record at a time, each read from the store as it
    /// goes, and stops once it is over `--segment-bytes` (such a segment is never listed): it
    /// held every changed record's value, then the whole document as text and as bytes, before
    /// comparing its size with the bound, so its peak grew with the changes (500,000 changes:
    /// 446 MB). Here 100,000 changed frameworks published with a bound of 1 MiB (the oversized
    /// path: a snapshot at the head), against a publish of the same store into an empty folder
    /// (the same snapshot, no segment): what the changes cost is about their keys. Debug
    /// storectl: 998 bytes a change before (142 MiB against 47), 120 after (58 MiB).
    @Test("a publish of 100,000 changes over the segment bound holds about their keys, at most 400 bytes a change")
    func aPublishHoldsTheChangedKeysNotTheirValues() async throws {
        let cli = try Storectl()
        let count = 100_000
        // Published empty, then filled: the sync's inserts are the next publish's changes.
        let folder = cli.directory.path + "/published", fresh = cli.directory.path + "/fresh"
        expectSuccess(try await cli.run(["--db", "src.sqlite", "migrate"]))
        expectSuccess(try await cli.run(["--db", "src.sqlite", "publish", folder]))
        try await PublishTests.source(cli, frameworks: count)

        let src = cli.directory.path + "/src.sqlite"
        let bound = ["--segment-bytes", "1MiB"]
        let withChanges = try await Self.peakResidentBytes(cli, ["--db", src, "publish", folder] + bound)
        let snapshotOnly = try await Self.peakResidentBytes(cli, ["--db", src, "publish", fresh] + bound)
        let perChange = (withChanges - snapshotOnly) / count
        print(
            "SyncMemoryTests: publish of \(count) changes over the bound \(withChanges >> 20) MiB, "
                + "the same snapshot alone \(snapshotOnly >> 20) MiB: \(perChange) bytes a change"
        )
        let manifest = try PublishTests.manifest(folder)
        #expect((manifest["segments"] as? [Any])?.isEmpty == true, "\(manifest)")
        #expect((manifest["snapshot"] as? [String: Any])?["sequence"] as? Int == 2, "\(manifest)")
        #expect(perChange < 400, "with changes \(withChanges) bytes, the snapshot alone \(snapshotOnly) bytes at their peak")
    }

    /// `storectl watch` reads a committed transaction's change-log text element by element: it
    /// parsed the text whole, a tree of about 600 bytes an event, and peaked at 741 MB while a
    /// sync of 1,000,000 events committed (296 MB read element by element). Its peak (VmHWM)
    /// once it has printed a 200,000-event sync, less its peak before, per event (debug storectl:
    /// 732 bytes parsed whole, 278 element by element).
    @Test("watch holds at most 450 bytes an event of a large transaction")
    func watchReadsTheLogElementByElement() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl.run(["migrate"]))
        let count = 200_000
        var feed = Data(#"{"version": 1, "events": ["#.utf8)
        for index in 0..<count {
            feed.append(
                Data(#"\#(index == 0 ? "" : ","){"id": "e-\#(index)", "title": "T", "date": "2026-06-\#(10 + index % 19)"}"#.utf8)
            )
        }
        feed.append(Data("]}".utf8))
        let feedPath = try storectl.directory.write(feed, to: "events.json")
        let out = storectl.directory.path + "/watch.out"
        let watcher = try await storectl.start(
            ["-c", #"exec "$0" watch --json > "$1""#, try Storectl.executableURL().path, out], shell: true)
        defer { watcher.send(SIGKILL) }
        #expect(await watcher.wait(within: .seconds(240)) { $0.stderr.contains("watching") }, "\(watcher.stderr)")
        func peak() throws -> Int {
            let status = try String(contentsOfFile: "/proc/\(watcher.pid)/status", encoding: .utf8)
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
        let before = try peak()
        expectSuccess(try await storectl.run(["sync", feedPath, "--quiet"], timeout: 300))
        let last = #""key":"e-\#(count - 1)""#
        var printed = false
        // Up to 240 s: watch prints 200,000 events from a debug build beside the whole suite.
        for _ in 0..<1_200 where !printed {
            if let handle = FileHandle(forReadingAtPath: out) {
                let size = handle.seekToEndOfFile()
                handle.seek(toFileOffset: size > 4096 ? size - 4096 : 0)
                printed = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self).contains(last)
                handle.closeFile()
            }
            if !printed { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(printed, "watch did not print the last event")
        let after = try peak()
        let perEvent = (after - before) / count
        print(
            "SyncMemoryTests: watch \(before >> 20) MiB before, \(after >> 20) MiB after \(count) events: \(perEvent) bytes an event"
        )
        #expect(perEvent < 450, "VmHWM \(before) then \(after)")
    }
}
