import Foundation
import Testing

/// A remote feed's pages are written to a temporary file as they download (never held in
/// memory) and read from there in chunks; the file is removed after the sync, whether it
/// succeeded or failed.
@Suite(.timeLimit(.minutes(10)))
struct SpooledDownloadTests {
    static func page(_ range: Range<Int>, next: String?) -> String {
        let records = range.map { index in
            #"{"id": "fw-\#(index)", "name": "Framework \#(index)", "imageName": "i", "urlString": "https://example.com/\#(index)", "description": "\#(String(repeating: "d", count: 200))"}"#
        }
        return
            #"{"version": 1, "frameworks": [\#(records.joined(separator: ",\n"))]\#(next.map { #", "next": "\#($0)""# } ?? "")}"#
    }

    @Test("sync URL spools each page to TMPDIR and removes it, also when a page is over --max-bytes")
    func spoolIsRemovedAfterEverySync() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        try server.publish("feed.json", Self.page(0..<100, next: "feed-2.json"))
        try server.publish("feed-2.json", Self.page(100..<3000, next: nil))
        let url = server.url("/feed.json").absoluteString
        let cli = try Storectl()
        let temporary = cli.directory.file("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        func leftOver() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: temporary) }

        let synced = try await cli.run(["sync", url], environment: ["TMPDIR": temporary])
        #expect(synced.status == 0, "\(synced)")
        #expect(try await cli.run(["frameworks", "show", "fw-0"]).status == 0)
        #expect(try await cli.run(["frameworks", "show", "fw-2999"]).status == 0)
        #expect(try leftOver() == [])

        // The second page is about 800 kB: over the cap, it is refused by its URL, the store
        // keeps what it had, and the spooled first page is removed too.
        #expect(try await cli.run(["frameworks", "delete", "fw-5"]).status == 0)
        let capped = try await cli.run(["sync", url, "--force", "--max-bytes", "100KiB"], environment: ["TMPDIR": temporary])
        #expect(capped.status != 0, "\(capped)")
        #expect(capped.stderr.contains(server.url("/feed-2.json").absoluteString), "\(capped)")
        #expect(capped.stderr.contains("larger than the limit") && capped.stderr.contains("--max-bytes"), "\(capped)")
        #expect(try await cli.run(["frameworks", "show", "fw-5"]).status != 0)
        #expect(try await cli.run(["frameworks", "show", "fw-2999"]).status == 0)
        #expect(try leftOver() == [])
    }

    /// A sync killed outright (SIGKILL) leaves its spool folder; nothing removed them, and 553
    /// had piled up in one machine's /tmp.
    @Test("sync URL removes the spool folders killed syncs left in TMPDIR a day ago, and nothing else")
    func staleSpoolFoldersAreRemoved() async throws {
        let server = try await RecordingServer.start()
        defer { server.stop() }
        try server.publish("feed.json", Self.page(0..<10, next: nil))
        let cli = try Storectl()
        let temporary = try cli.directory.makeDirectory("tmp")
        let twoDaysAgo = Date().addingTimeInterval(-2 * 86_400)
        let stale = ["store-feed-Ab3xZ9", "store-feed-47C49753-FF1B-4BA5-AF7D-78CE61FF824E"]
        // store-feed-backup: a user's folder (mkdir's 0755), named as a spool folder is.
        let kept = ["store-feed-recent", "store-feed-notes", "other-Ab3xZ9", "store-feed-backup"]
        for name in stale + kept {
            let folder = temporary + "/" + name
            // Mode 0700, as mkdtemp makes a spool folder.
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: false,
                attributes: [.posixPermissions: name == "store-feed-backup" ? 0o755 : 0o700])
            try Data("{}".utf8).write(to: URL(fileURLWithPath: folder + "/page-1.json"))
            let date = name == "store-feed-recent" ? Date() : twoDaysAgo
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: folder + "/page-1.json")
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: folder)
        }

        let synced = try await cli.run(["sync", server.url("/feed.json").absoluteString], environment: ["TMPDIR": temporary])
        #expect(synced.status == 0, "\(synced)")
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary)
        #expect(Set(left) == Set(kept), "left in TMPDIR: \(left.sorted()); \(synced)")
    }
}
