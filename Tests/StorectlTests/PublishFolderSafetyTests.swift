import Foundation
import Testing

/// A published folder shared with other files and other publishers: a publish deletes only what
/// it wrote, holds the folder alone, and never merges or restarts over files it cannot trust.
@Suite(.timeLimit(.minutes(10)))
struct PublishFolderSafetyTests {
    /// A source store `src.sqlite` with 3 frameworks and a folder `pub` published once.
    private func published() async throws -> (Storectl, folder: String) {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 3)
        let folder = cli.directory.file("pub")
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        return (cli, folder)
    }

    private func change(_ cli: Storectl, _ description: String) async throws {
        expectSuccess(try await cli("--db", "src.sqlite", "frameworks", "update", "fw-000001", "--description", description))
    }

    private func names(_ folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    /// Another publisher's lock on `folder` (as a publish under way holds it): its descriptor.
    private func lock(_ folder: String) -> Int32 {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY)
        #expect(descriptor >= 0 && flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        return descriptor
    }

    /// Starts `storectl publish` into `folder`, which another holds the lock on, and returns once
    /// it says (a test switch) that it waits for the lock; it then waits as long as it takes.
    private func publishWaitingForTheLock(
        _ cli: Storectl, _ folder: String, _ options: [String] = [], environment: [String: String?] = [:]
    ) async throws -> BackgroundProcess {
        let publish = try await cli.start(
            ["--db", "src.sqlite", "publish", folder] + options,
            environment: environment.merging(["STORECTL_TEST_WAIT_FOR_PUBLISH_LOCK": "1"]) { $1 })
        let waits = await publish.wait(within: .seconds(240)) { $0.stderr.contains("waiting for the lock") }
        #expect(waits, "the publish did not wait for the lock: \(publish.stderr)")
        return publish
    }

    @Test("files of others in the folder survive every publish, even listed as retired in a manifest edited by hand")
    func deletesOnlyItsOwnFiles() async throws {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 3)
        let folder = cli.directory.file("pub")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Names a publisher's prefixes would once have matched, an old temporary-looking file
        // (deleted by the first publish), and a store of the folder's.
        let theirs = ["snapshot-notes.json", "segment-plan.json", ".bashrc.tmp-keep", "index.html", "segment-1-2-ABC.json"]
        for name in theirs { try Data("mine".utf8).write(to: URL(fileURLWithPath: folder + "/" + name)) }
        let old = Date(timeIntervalSinceNow: -86_400)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: folder + "/.bashrc.tmp-keep")
        let first = expectSuccess(try await cli("--db", "src.sqlite", "publish", folder, "--json"))
        // The report names every file written: the snapshot's pages and the manifest.
        let written = PublishTests.json(first)["filesWritten"] as? [String] ?? []
        #expect(written.contains("manifest.json") && written.contains { $0.hasPrefix("snapshot-1-1-") }, "\(written)")
        // A manifest edited to retire index.html long ago.
        var manifest = try PublishTests.manifest(folder)
        var publisher = manifest["publisher"] as? [String: Any] ?? [:]
        publisher["retired"] = [["name": "index.html", "since": "2000-01-01T00:00:00Z"]]
        manifest["publisher"] = publisher
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: folder + "/manifest.json"))
        for round in 0..<3 {
            try await change(cli, "round \(round)")
            expectSuccess(try await cli("--db", "src.sqlite", "publish", folder, "--grace-seconds", "0"))
        }
        let left = try names(folder)
        for name in theirs { #expect(left.contains(name), "\(name) is still there: \(left)") }
        // Its own retired files did go: only the manifest's files and theirs are left.
        let named = try PublishTests.manifest(folder)
        let snapshot = (named["snapshot"] as? [String: Any])?["files"] as? [[String: Any]] ?? []
        let segments = named["segments"] as? [[String: Any]] ?? []
        let own = Set((snapshot + segments).compactMap { $0["name"] as? String } + ["manifest.json"])
        #expect(Set(left) == own.union(theirs), "\(left)")

        // A store kept in the folder under a name a publisher could have written is never deleted.
        let store = "pub2/segment-9-9-0123456789abcdef.json"
        try FileManager.default.createDirectory(atPath: cli.directory.file("pub2"), withIntermediateDirectories: true)
        expectSuccess(try await cli("--db", store, "sync", cli.directory.path + "/seed.json", "--quiet"))
        for round in 0..<3 {
            expectSuccess(try await cli("--db", store, "frameworks", "update", "fw-000001", "--description", "r\(round)"))
            expectSuccess(try await cli("--db", store, "publish", cli.directory.file("pub2"), "--grace-seconds", "0"))
        }
        #expect(try await sqlite3(cli.directory.file(store), "PRAGMA integrity_check") == "ok")
        expectSuccess(try await cli("--db", store, "frameworks", "show", "fw-000001"))
    }

    @Test("a second publish into a folder another holds fails (after a second), and changes nothing")
    func onePublishAtATime() async throws {
        let (cli, folder) = try await published()
        try await change(cli, "new")
        let before = try names(folder)
        let manifest = try Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.json"))
        let descriptor = lock(folder)
        expectFailure(
            try await cli("--db", "src.sqlite", "publish", folder), status: 1,
            mentioning: [folder, "another publish (or another program) holds the lock on this folder"])
        #expect(try names(folder) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.json")) == manifest)
        close(descriptor)
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
    }

    @Test("a publish that waited for the folder's lock publishes the store as it is then, never rolling the folder back")
    func aPublishWaitingForTheLockReadsTheStoreAfterIt() async throws {
        let (cli, folder) = try await published()
        let generation = try PublishTests.manifest(folder)["generation"] as? String
        // Another publisher holds the folder's lock while B starts; B says (a test switch) once
        // it waits for the lock, and then waits as long as it takes.
        let descriptor = lock(folder)
        let waiting = try await publishWaitingForTheLock(cli, folder, ["--json"])
        // Meanwhile a commit, and the lock's holder publishes it (head 2): as another publish
        // would, through a copy of the folder, its new files and manifest put in place.
        try await change(cli, "committed while B waited")
        let copy = cli.directory.file("pub-copy")
        try FileManager.default.copyItem(atPath: folder, toPath: copy)
        expectSuccess(try await cli("--db", "src.sqlite", "publish", copy))
        let present = try names(folder)
        for name in try names(copy) where name != "manifest.json" && !present.contains(name) {
            try FileManager.default.copyItem(atPath: copy + "/" + name, toPath: folder + "/" + name)
        }
        let manifest = try Data(contentsOf: URL(fileURLWithPath: copy + "/manifest.json"))
        try manifest.write(to: URL(fileURLWithPath: folder + "/manifest.json"), options: .atomic)
        close(descriptor)
        #expect(await waiting.waitForExit(within: .seconds(240)) == 0, "\(waiting.stderr)")
        // B read the store once it held the lock: the folder already has it all. (Reading it
        // before, it saw the manifest ahead of its snapshot and published the older state as a
        // new generation: clients read it whole, and lost the change.)
        let report = try JSON.object(waiting.stdout)
        #expect(report["outcome"] as? String == "unchanged", "\(report)")
        let after = try PublishTests.manifest(folder)
        #expect(after["generation"] as? String == generation && after["head"] as? Int == 2, "\(after)")
        expectSuccess(try await cli("--db", "client.sqlite", "sync", folder, "--quiet"))
        #expect(try await PublishTests.export(cli, "client.sqlite") == PublishTests.export(cli, "src.sqlite"))
    }

    /// Two publishes into a new path: the first creates the folder, the second finds it and
    /// waits for its lock. The first fails and removes the folder it created: the second then
    /// locked a removed folder and failed, writing into a path that named nothing.
    @Test("a publish whose folder was removed while it waited for the lock makes the folder again and publishes")
    func folderRemovedWhileWaiting() async throws {
        let cli = try Storectl()
        try await PublishTests.source(cli, frameworks: 3)
        let parent = cli.directory.file("new")
        let folder = parent + "/pub"
        // The first publish: it made the folder and its parent, and holds the lock.
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let descriptor = lock(folder)
        let waiting = try await publishWaitingForTheLock(cli, folder)
        // It fails, and removes what it created, still holding the lock.
        #expect(rmdir(folder) == 0 && rmdir(parent) == 0)
        close(descriptor)
        #expect(await waiting.waitForExit(within: .seconds(240)) == 0, "\(waiting.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/manifest.json"))
        expectSuccess(try await cli("--db", "client.sqlite", "sync", folder, "--quiet"))
        #expect(try await PublishTests.export(cli, "client.sqlite") == PublishTests.export(cli, "src.sqlite"))
    }

    /// The folder moved away and another put at its path while a publish waited for the lock:
    /// the lock it then got was on the moved folder, and it published into the new one while
    /// that one's own lock was held.
    @Test("a publish whose folder was replaced while it waited locks the folder at the path before it publishes")
    func folderReplacedWhileWaiting() async throws {
        let (cli, folder) = try await published()
        try await change(cli, "second")
        let old = lock(folder)
        let waiting = try await publishWaitingForTheLock(cli, folder)
        // Moved away; a new folder at the path, locked by another publisher.
        let moved = cli.directory.file("pub-moved")
        #expect(rename(folder, moved) == 0)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let new = lock(folder)
        close(old)
        // It waits again, for the new folder's lock, and writes nothing meanwhile.
        let waitsAgain = await waiting.wait(within: .seconds(240)) {
            $0.stderr.components(separatedBy: "waiting for the lock").count == 3
        }
        #expect(waitsAgain, "the publish did not wait for the new folder's lock: \(waiting.stderr)")
        #expect(try names(folder) == [])
        close(new)
        #expect(await waiting.waitForExit(within: .seconds(240)) == 0, "\(waiting.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder + "/manifest.json"))
    }

    @Test("a publish interrupted (SIGTERM) while it waits for the folder's lock: exit 143, says the folder keeps its manifest")
    func interruptedPublishSaysWhatIsLeft() async throws {
        let (cli, folder) = try await published()
        try await change(cli, "never published")
        let before = try names(folder)
        let manifest = try Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.json"))
        let descriptor = lock(folder)
        defer { close(descriptor) }
        let publish = try await publishWaitingForTheLock(cli, folder, environment: ["STORECTL_TEST_INTERRUPT_GRACE": "600"])
        publish.send(SIGTERM)
        #expect(await publish.waitForExit(within: .seconds(240)) == 143, "\(publish.stderr)")
        #expect(
            publish.stderr.contains("publish into \(folder) interrupted; the folder keeps its previous manifest"),
            "\(publish.stderr)")
        #expect(try names(folder) == before)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/manifest.json")) == manifest)
    }

    @Test("a published file changed by hand is not merged; a manifest that cannot be read is not replaced")
    func untrustedFilesStopThePublish() async throws {
        let (cli, folder) = try await published()
        try await change(cli, "second")
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        let segment = try #require(try names(folder).first { $0.hasPrefix("segment-2-2-") })
        let path = folder + "/" + segment
        let text = try String(contentsOfFile: path, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "second", with: "TAMPER").utf8).write(to: URL(fileURLWithPath: path))
        try await change(cli, "third")
        // Segment 3 would be merged with segment 2: the tampered segment stops it.
        expectFailure(try await cli("--db", "src.sqlite", "publish", folder), status: 1, mentioning: [segment, "SHA-256"])
        #expect(!(try names(folder)).contains { $0.hasPrefix("segment-2-3-") })

        // A manifest that cannot be read (here a folder in its place) is an error, not "no manifest".
        let (other, otherFolder) = try await published()
        let manifest = otherFolder + "/manifest.json"
        try FileManager.default.removeItem(atPath: manifest)
        try FileManager.default.createDirectory(atPath: manifest, withIntermediateDirectories: false)
        let before = try names(otherFolder)
        expectFailure(try await other("--db", "src.sqlite", "publish", otherFolder), status: 1, mentioning: ["manifest.json"])
        #expect(try names(otherFolder) == before)
    }

    @Test("a copy of the store that wrote as much since publishes a new generation, not 'unchanged'")
    func aCopyOfTheStoreIsToldApart() async throws {
        let (cli, folder) = try await published()
        let copy = cli.directory.file("copy.sqlite")
        try FileManager.default.copyItem(atPath: cli.directory.file("src.sqlite"), toPath: copy)
        // One transaction each since the copy: the same transaction number, another history.
        expectSuccess(try await cli("--db", "src.sqlite", "frameworks", "update", "fw-000001", "--name", "from the source"))
        expectSuccess(try await cli("--db", "src.sqlite", "publish", folder))
        expectSuccess(try await cli("--db", copy, "frameworks", "update", "fw-000002", "--name", "from the copy"))
        let report = PublishTests.json(expectSuccess(try await cli("--db", copy, "publish", folder, "--json")))
        #expect(report["outcome"] as? String == "snapshot", "\(report)")
        #expect((report["reason"] as? String)?.contains("copy") == true, "\(report)")
        // A client gets the copy's state, whole.
        expectSuccess(try await cli("--db", "client.sqlite", "sync", folder, "--quiet"))
        #expect(try await PublishTests.export(cli, "client.sqlite") == PublishTests.export(cli, copy))
        // Publishing the copy again, with nothing new: unchanged.
        let again = PublishTests.json(expectSuccess(try await cli("--db", copy, "publish", folder, "--json")))
        #expect(again["outcome"] as? String == "unchanged", "\(again)")
    }
}
