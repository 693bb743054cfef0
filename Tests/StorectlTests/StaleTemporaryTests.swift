import Foundation
import Testing

/// A process killed with SIGKILL (or a power cut) before renaming its output into place leaves
/// its temporary file (`.NAME.tmp-XXXXXX`) behind; nothing in it ever removes it. The next export
/// or publish to the same place removes those of its own files' names once a day old (export)
/// or the grace period old (publish, an hour by default), and
/// nothing else: not a young one (another process may be writing it), not another file's, not a
/// folder, not a name that only looks alike.
@Suite(.timeLimit(.minutes(10)))
struct StaleTemporaryTests {
    /// Creates each file (or, for names ending in `/`, a folder) in `folder`, `age` seconds old
    /// unless its name is in `young` (then new).
    private func plant(_ names: [String], young: Set<String> = [], age: TimeInterval, in folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let old = Date(timeIntervalSinceNow: -age)
        for name in names {
            let path = folder + "/" + name
            if name.hasSuffix("/") {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            } else {
                try Data("partial".utf8).write(to: URL(fileURLWithPath: path))
            }
            if !young.contains(name) { try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path) }
        }
    }

    private func names(_ folder: String) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: folder))
    }

    @Test("a paged export removes old temporary files of any page's name, and keeps the rest")
    func pagedExport() async throws {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 3)
        let folder = cli.directory.file("out")
        let stale = [".feed.json.tmp-Ab12Cd", ".feed-2.json.tmp-x1Y2z3", ".feed-7.json.tmp-Zz99Yy"]
        let kept = [
            ".feed-3.json.tmp-Young1", ".notes.json.tmp-abcdef", ".feed-01.json.tmp-abcdef", ".feed-1.json.tmp-abcdef",
            ".feed.json.tmp-toolong", ".feed.json.tmp-ab_c12", ".feed-4.json.tmp-dir123/", "feed.json.tmp-abcdef",
        ]
        // A day and a minute old, but one: an hour and a minute (a long export's staged page).
        try plant(stale + kept, young: [".feed-3.json.tmp-Young1"], age: 86_460, in: folder)
        try plant([".feed-5.json.tmp-Hour01"], age: 3_660, in: folder)
        expectSuccess(try await cli("--db", "src.sqlite", "export", "--page-size", "1", "--out", folder))
        let left = try names(folder)
        #expect(left.isDisjoint(with: stale), "\(left.sorted())")
        #expect(left.isSuperset(of: kept.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }), "\(left.sorted())")
        #expect(left.isSuperset(of: ["feed.json", "feed-2.json", "feed-3.json", ".feed-5.json.tmp-Hour01"]), "\(left.sorted())")
    }

    @Test("an export to a file removes that file's old temporary files only")
    func fileExport() async throws {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 1)
        let folder = cli.directory.file("out")
        let stale = [".all.json.tmp-Ab12Cd"]
        let kept = [".all.json.tmp-Young1", ".other.json.tmp-Ab12Cd", ".feed.json.tmp-Ab12Cd"]
        try plant(stale + kept, young: [".all.json.tmp-Young1"], age: 86_460, in: folder)
        expectSuccess(try await cli("--db", "src.sqlite", "export", "--out", folder + "/all.json"))
        let left = try names(folder)
        #expect(left == Set(kept + ["all.json"]), "\(left.sorted())")
    }

    @Test("a publish removes old temporary files of the manifest's and its files' names only")
    func publish() async throws {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 2)
        let folder = cli.directory.file("pub")
        let stale = [".manifest.json.tmp-Ab12Cd", ".snapshot-9-1-0123456789abcdef.json.tmp-Ab12Cd"]
        let kept = [".manifest.json.tmp-Young1", ".snapshot-notes.json.tmp-Ab12Cd", ".feed.json.tmp-Ab12Cd"]
        try plant(stale + kept, young: [".manifest.json.tmp-Young1"], age: 3_660, in: folder)
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        let left = try names(folder)
        #expect(left.isDisjoint(with: stale), "\(left.sorted())")
        #expect(left.isSuperset(of: kept), "\(left.sorted())")
    }
}
