import Foundation

/// A temporary folder for the pages of one fetch that are not already files (downloads, a
/// pipe): each is written here as it arrives, so no page is ever held in memory. The folder
/// and everything in it are removed when the last reference goes, whether the sync succeeded,
/// failed or was cancelled (a fetch shared by concurrent syncs keeps it until all are done).
/// Only a process killed outright leaves it; a later sync removes it once a day old.
final class SpoolFolder: Sendable {
    let url: URL

    /// The folders alive now, for `removeAll`.
    private static let live = LockedBox<Set<String>>([])

    /// The paths of the folders alive now.
    static var livePaths: Set<String> { live.withLock { $0 } }

    /// Removes every spool folder alive now, and returns once they are gone: for a process
    /// about to exit without running deinitializers (storectl's second Ctrl-C, a cancellation
    /// past its grace period, or the end of a command while a folder's last reference goes on
    /// another thread), which used to leave a whole download in the temporary folder for good.
    /// A folder leaves the live set only once it is deleted (see `deinit`), so one whose
    /// deinitializer is deleting it on another thread is still here, and deleted here too.
    static func removeAll() {
        let paths = live.withLock { $0 }
        for path in paths { delete(path) }
        live.withLock { $0.subtract(paths) }
    }

    /// Deletes the folder at `path` with everything in it; returns once it is gone (or cannot
    /// be deleted). Two threads may delete one folder at once (`removeAll` and the folder's
    /// deinitializer): a removal that fails because the other removed a file first is tried
    /// again, a few times, until the folder is gone.
    private static func delete(_ path: String) {
        for _ in 0..<8 {
            try? FileManager.default.removeItem(atPath: path)
            var info = stat()
            if lstat(path, &info) != 0, errno == ENOENT { return }
        }
    }

    /// The start of every spool folder's name: `store-feed-` and the six letters or digits
    /// `mkdtemp` chose (`store-feed-Ab3xZ9`).
    static let namePrefix = "store-feed-"

    /// How long a spool folder must have been left unmodified (the folder and every file in it)
    /// before a later sync removes it as a killed sync's: a day, as for an export's temporary
    /// files. A sync writes its pages as they arrive and deletes the folder when it ends, so a
    /// day-old folder is one whose process was killed outright (SIGKILL, a power cut).
    static let staleAge: TimeInterval = 86_400

    /// How often a process sweeps one temporary folder, at most.
    static let sweepInterval: TimeInterval = 3_600
    /// When this process last swept each temporary folder.
    private static let lastSweep = LockedBox<[String: Date]>([:])

    /// Creates a new spool folder in the temporary folder (`TMPDIR`, else /tmp), first removing
    /// the folders that killed syncs left there (see `removeStale`).
    init() throws {
        let parent = FileManager.default.temporaryDirectory
        // Best effort: a leftover folder that cannot be removed must not fail the sync. At most
        // once an hour per folder in a process: a long-lived app syncing every minute need not
        // list TMPDIR (hundreds of entries, often) every minute.
        let now = Date()
        let due = Self.lastSweep.withLock { swept in
            guard now.timeIntervalSince(swept[parent.path] ?? .distantPast) >= Self.sweepInterval else { return false }
            swept[parent.path] = now
            return true
        }
        if due { Self.removeStale(in: parent.path, now: now) }
        // mkdtemp: a name the kernel guarantees is new (never another sync's folder, whatever
        // the random source gives), created 0700 in the same call: downloads (fetched with a
        // bearer token, perhaps) are this user's alone.
        let template = parent.appendingPathComponent(Self.namePrefix + "XXXXXX").path
        var created = Self.makeFolder(template)
        if created == nil, errno == ENOENT {
            // The temporary folder itself is missing (a TMPDIR not created yet): as before
            // mkdtemp, it is created.
            try? FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            created = Self.makeFolder(template)
        }
        guard let created else {
            throw FeedSourceError.unreadable(
                path: template,
                reason: "cannot create a temporary folder for the download: \(String(cString: strerror(errno)))")
        }
        url = URL(fileURLWithPath: created, isDirectory: true)
        Self.live.withLock { _ = $0.insert(created) }
    }

    /// `mkdtemp(template)`: the folder's path, or nil with `errno` set.
    private static func makeFolder(_ template: String) -> String? {
        var bytes = Array(template.utf8CString)
        guard bytes.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else { return nil }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// True for a name a spool folder has: `store-feed-` and the six letters or digits
    /// `mkdtemp` chose, or (folders of earlier versions, which left hundreds behind) an
    /// uppercase UUID, as Foundation writes it.
    static func isSpoolName(_ name: String) -> Bool {
        guard name.hasPrefix(namePrefix) else { return false }
        let rest = name.dropFirst(namePrefix.count)
        if rest.count == 6 { return rest.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
        return rest.count == 36 && UUID(uuidString: String(rest)) != nil && rest == rest.uppercased()
    }

    /// Whether `name` is a file a spool folder holds: a page (`page-…`) or a published file's
    /// download (`published-…`).
    static func isSpoolFileName(_ name: String) -> Bool {
        name.hasPrefix("page-") || name.hasPrefix("published-")
    }

    /// Removes from `folder` the spool folders of syncs killed outright (SIGKILL, a power cut:
    /// nothing else removes them, and they hold whole downloads), with everything in them.
    /// Only a real folder (never a symbolic link, which is not followed) named exactly as
    /// spool folders are (`isSpoolName`), owned by this user, not alive in this process, and
    /// whose newest modification time (its own or a file's in it) is at least `age` seconds
    /// before `now`; and only if it holds nothing but plain files and links (a spool folder
    /// holds pages), which are unlinked, never followed. Returns the names removed.
    ///
    /// A name of `mkdtemp`'s shape is also a word's (`store-feed-backup`, `store-feed-export`):
    /// a user's folder of that name in `TMPDIR`, a day old, was deleted with its files by any
    /// sync, even one that then failed. Such a folder is removed only if it has the mode
    /// `mkdtemp` gives (0700; `mkdir` gives 0755 under the usual umask) and holds nothing but
    /// files named as a spool folder's are (`isSpoolFileName`).
    @discardableResult
    static func removeStale(in folder: String, olderThan age: TimeInterval = staleAge, now: Date) -> [String] {
        let alive = livePaths
        var removed: [String] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where isSpoolName(name) {
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
                !alive.contains(path), !alive.contains(URL(fileURLWithPath: path).standardizedFileURL.path)
            else { continue }
            // mkdtemp's names only: an earlier version's UUID is no word.
            let madeByMkdtemp = name.count == namePrefix.count + 6
            if madeByMkdtemp, info.st_mode & 0o777 != 0o700 { continue }
            var newest = OutputFile.modificationSecond(info)
            var files: [String] = []
            var onlyFiles = true
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                var entryInfo = stat()
                guard lstat(path + "/" + entry, &entryInfo) == 0 else { continue }
                let type = entryInfo.st_mode & S_IFMT
                if type != S_IFREG && type != S_IFLNK { onlyFiles = false }
                if madeByMkdtemp, !isSpoolFileName(entry) { onlyFiles = false }
                newest = max(newest, OutputFile.modificationSecond(entryInfo))
                files.append(entry)
            }
            guard onlyFiles, now.timeIntervalSince(Date(timeIntervalSince1970: TimeInterval(newest))) >= age else { continue }
            for file in files { unlink(path + "/" + file) }
            if rmdir(path) == 0 { removed.append(name) }
        }
        return removed
    }

    deinit {
        // Deleted first, then off the live set: a process that ends while this runs on another
        // thread finds the folder in the set, and deletes it before it exits (`removeAll`).
        // Taken off first, the folder was left, emptied, by most interrupted HTTP syncs.
        let path = url.path
        Self.delete(path)
        Self.live.withLock { _ = $0.remove(path) }
    }

    /// The file for page `number`.
    func file(forPage number: Int) -> URL {
        url.appendingPathComponent("page-\(number).json")
    }
}
