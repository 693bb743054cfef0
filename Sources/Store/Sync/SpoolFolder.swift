import Foundation

/// A temporary folder for the pages of one fetch that are not already files (downloads, a
/// pipe): each is written here as it arrives, so no page is ever held in memory. The folder
/// and everything in it are removed when the last reference goes, whether the sync succeeded,
/// failed or was cancelled (a fetch shared by concurrent syncs keeps it until all are done).
final class SpoolFolder: Sendable {
    let url: URL

    /// The folders alive now, for `removeAll`.
    private static let live = LockedBox<Set<String>>([])

    /// The paths of the folders alive now.
    static var livePaths: Set<String> { live.withLock { $0 } }

    /// Removes every spool folder alive now: for a process about to `_exit` without running
    /// deinitializers (storectl's second Ctrl-C, or a cancellation past its grace period),
    /// which used to leave a whole download in the temporary folder for good.
    static func removeAll() {
        let paths = live.withLock { paths in
            defer { paths.removeAll() }
            return paths
        }
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
    }

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("store-feed-\(UUID().uuidString)", isDirectory: true)
        do {
            // 0700: downloads (fetched with a bearer token, perhaps) are this user's alone.
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw FeedSourceError.unreadable(
                path: url.path, reason: "cannot create a temporary folder for the download: \(FeedLoader.reason(error))")
        }
        let path = url.path
        Self.live.withLock { _ = $0.insert(path) }
    }

    deinit {
        let path = url.path
        Self.live.withLock { _ = $0.remove(path) }
        try? FileManager.default.removeItem(at: url)
    }

    /// The file for page `number`.
    func file(forPage number: Int) -> URL {
        url.appendingPathComponent("page-\(number).json")
    }
}
