import Foundation
import StoreTestSupport
import Testing

@testable import Store

@Suite("Spool folders")
struct SpoolFolderTests {
    /// `removeAll` itself is not called here: it removes every live folder of the process,
    /// those of the syncs other tests run meanwhile too.
    @Test("a folder is listed for removeAll (a process exiting without unwinding) while it lives, and removed at its end")
    func listedWhileAlive() throws {
        var folder: SpoolFolder? = try SpoolFolder()
        let path = folder!.url.path
        try Data("page".utf8).write(to: folder!.file(forPage: 1))
        #expect(SpoolFolder.livePaths.contains(path))
        folder = nil
        #expect(!SpoolFolder.livePaths.contains(path))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("a spool folder is made by mkdtemp: store-feed- and six letters or digits, mode 0700, never another's")
    func madeByMkdtemp() throws {
        let first = try SpoolFolder(), second = try SpoolFolder()
        for folder in [first, second] {
            let name = folder.url.lastPathComponent
            #expect(SpoolFolder.isSpoolName(name) && name.count == "store-feed-XXXXXX".count, "\(name)")
            var info = stat()
            #expect(lstat(folder.url.path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        }
        #expect(first.url != second.url)
    }

    /// Folders of syncs killed outright (SIGKILL) stayed in TMPDIR for good: 553 had piled up.
    @Test("a day-old spool folder is removed; a recent one, one with a recent file, a link, other names stay")
    func staleFoldersAreRemoved() throws {
        let directory = try TemporaryDirectory(prefix: "spool-sweep")
        let parent = directory.path
        let twoDaysAgo = Date().addingTimeInterval(-2 * 86_400)
        /// A folder with one page, both modified `at`; mode 0700, as mkdtemp makes it.
        @discardableResult
        func folder(_ name: String, at date: Date, fileAt fileDate: Date? = nil) throws -> String {
            let path = parent + "/" + name
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            try Data("{}".utf8).write(to: URL(fileURLWithPath: path + "/page-1.json"))
            try FileManager.default.setAttributes([.modificationDate: fileDate ?? date], ofItemAtPath: path + "/page-1.json")
            try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
            return path
        }
        let old = "store-feed-Ab3xZ9"
        let oldUUIDNamed = "store-feed-47C49753-FF1B-4BA5-AF7D-78CE61FF824E"
        try folder(old, at: twoDaysAgo)
        try folder(oldUUIDNamed, at: twoDaysAgo)
        let kept = [
            "store-feed-recent", "store-feed-newfil", // recent; an old folder with a recent file
            "store-feed-notes", "store-feed-Ab3xZ9x", "store-feedAb3xZ9", "my-store-feed-Ab3xZ9",
            "store-feed-47c49753-ff1b-4ba5-af7d-78ce61ff824e", // not as Foundation writes a UUID
        ]
        try folder("store-feed-recent", at: Date())
        try folder("store-feed-newfil", at: twoDaysAgo, fileAt: Date())
        for name in kept.dropFirst(2) { try folder(name, at: twoDaysAgo) }
        // A link named as a spool folder, to an old folder elsewhere: neither is touched.
        let elsewhere = try folder("elsewhere", at: twoDaysAgo)
        try FileManager.default.createSymbolicLink(atPath: parent + "/store-feed-LinkAA", withDestinationPath: elsewhere)
        // A plain file named as one.
        try Data("x".utf8).write(to: URL(fileURLWithPath: parent + "/store-feed-FileAA"))
        try FileManager.default.setAttributes([.modificationDate: twoDaysAgo], ofItemAtPath: parent + "/store-feed-FileAA")

        let removed = SpoolFolder.removeStale(in: parent, now: Date())
        #expect(Set(removed) == [old, oldUUIDNamed])
        let left = Set(try FileManager.default.contentsOfDirectory(atPath: parent))
        #expect(left == Set(kept + ["elsewhere", "store-feed-LinkAA", "store-feed-FileAA"]))
        #expect(FileManager.default.fileExists(atPath: elsewhere + "/page-1.json"))
        // A day is the limit: a clock a day and a minute ahead finds the recent ones stale too.
        let later = SpoolFolder.removeStale(in: parent, now: Date().addingTimeInterval(86_460))
        #expect(Set(later) == ["store-feed-recent", "store-feed-newfil"])
    }

    /// `store-feed-` and six letters is mkdtemp's shape, and a word's: a user's day-old folder
    /// so named in TMPDIR was deleted, with its files, by any sync (even one that then failed).
    @Test("a user's folder named as a spool folder (store-feed-backup) stays: made by mkdir, or holding other files")
    func usersFoldersOfThatNameStay() throws {
        let directory = try TemporaryDirectory(prefix: "spool-sweep-user")
        let twoDaysAgo = Date().addingTimeInterval(-2 * 86_400)
        /// A day-old folder of `mode` holding `files`.
        func folder(_ name: String, mode: Int, files: [String]) throws {
            let path = directory.path + "/" + name
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: mode])
            for file in files {
                try Data("mine".utf8).write(to: URL(fileURLWithPath: path + "/" + file))
                try FileManager.default.setAttributes([.modificationDate: twoDaysAgo], ofItemAtPath: path + "/" + file)
            }
            try FileManager.default.setAttributes([.modificationDate: twoDaysAgo], ofItemAtPath: path)
        }
        try folder("store-feed-backup", mode: 0o755, files: ["page-1.json"]) // mkdir's mode
        try folder("store-feed-export", mode: 0o700, files: ["page-1.json", "notes.txt"]) // a file no sync writes
        try folder("store-feed-Ab3xZ9", mode: 0o700, files: ["page-8F1C.json", "published-8F1C"]) // a killed sync's
        #expect(SpoolFolder.removeStale(in: directory.path, now: Date()) == ["store-feed-Ab3xZ9"])
        #expect(FileManager.default.fileExists(atPath: directory.path + "/store-feed-backup/page-1.json"))
        #expect(FileManager.default.fileExists(atPath: directory.path + "/store-feed-export/notes.txt"))
        #expect(FileManager.default.fileExists(atPath: directory.path + "/store-feed-export/page-1.json"))
    }

    @Test("a spool folder owned by another user is left alone", .enabled(if: geteuid() == 0, "needs root to chown"))
    func othersFoldersStay() throws {
        let directory = try TemporaryDirectory(prefix: "spool-sweep-owner")
        let path = directory.path + "/store-feed-OtherA"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        #expect(chown(path, 65534, 65534) == 0)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-2 * 86_400)], ofItemAtPath: path)
        #expect(SpoolFolder.removeStale(in: directory.path, now: Date()).isEmpty)
        #expect(FileManager.default.fileExists(atPath: path))
    }
}
