import Foundation

/// Where a local feed may read image files (and its `next` pages) from: inside its own folder,
/// never elsewhere.
///
/// A relative image url of a local feed names a file. It is read only if, once `.` and `..`
/// are resolved (after percent-decoding) and then symbolic links (the file's real path against
/// the folder's), it lies inside the folder of the feed's first page. Absolute paths are never
/// read. The validator checks this (a problem with the JSON path), and the download checks it
/// again just before opening the file, which it opens by its real path.
enum LocalImagePath {
    /// The folder a local feed's relative names resolve in: its first page's folder; `none`
    /// when that page is not a regular file of its own: stdin or another pipe, a device,
    /// anything under /dev or /proc. (A page that is not there is given its folder: its bytes
    /// came from elsewhere, and every file is checked again when it is read.) The folder of /dev/stdin is /dev, where `"next": "kmsg"`
    /// hung the sync and `"next": "zero"` read zeros up to the size limit.
    static func folder(ofFirstPage page: URL) -> URL {
        let path = page.standardizedFileURL.path
        if path.hasPrefix("/dev/") || path.hasPrefix("/proc/") { return none }
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG { return none }
        return page.deletingLastPathComponent()
    }

    /// The folder of a feed that has none (see `folder(ofFirstPage:)`): nothing lies inside it.
    /// A path holding NUL, which no check below accepts, so any check that misses it still
    /// refuses.
    static let none = URL(fileURLWithPath: "/\u{0}no folder")

    /// Why `text` (an image url of a local feed, resolved to `location`) must not be read for a
    /// feed whose folder is `folder`; nil when it may be.
    static func refusal(_ text: String, location: URL, folder: URL) -> String? {
        if folder == none { return "names a file, but a feed read from stdin (or another pipe or device) has no folder" }
        if text.hasPrefix("/") { return "is an absolute path; a local feed names files relative to its own folder" }
        guard let path = normalized(location.path), let folderPath = normalized(folder.path) else {
            return "is not a file path"
        }
        guard isInside(path, folderPath) else { return "leaves the feed's folder \(folderPath)" }
        if let real = realPath(path), let realFolder = realPath(folderPath), !isInside(real, realFolder) {
            return "leads through a symbolic link out of the feed's folder \(folderPath)"
        }
        return nil
    }

    /// The real path of `location` when it lies inside `folder` after resolving symbolic links;
    /// throws otherwise (and when the file cannot be resolved, e.g. it does not exist).
    static func realPathInside(_ location: URL, folder: URL) throws -> String {
        if folder == none {
            throw FeedSourceError.unreadable(path: location.path, reason: "a feed read from stdin has no folder; refused")
        }
        guard let path = normalized(location.path), let folderPath = normalized(folder.path) else {
            throw FeedSourceError.unreadable(path: location.path, reason: "not a file path")
        }
        guard let real = realPath(path) else {
            throw FeedSourceError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        guard let realFolder = realPath(folderPath), isInside(real, realFolder) else {
            throw FeedSourceError.unreadable(path: path, reason: "outside the feed's folder \(folderPath); refused")
        }
        // Not a folder, a FIFO (which would block the read) or a device.
        var status = stat()
        guard stat(real, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw FeedSourceError.unreadable(path: path, reason: "not a regular file")
        }
        return real
    }

    /// An absolute path with `.` and `..` resolved textually; nil for a relative path or one
    /// holding NUL.
    static func normalized(_ path: String) -> String? {
        guard path.hasPrefix("/"), !path.utf8.contains(0) else { return nil }
        // Written into one buffer of the path's bytes, a `..` cutting it back to its last
        // slash: the path split into an array of parts, kept in another, took 64 bytes a part
        // (an image url of 10 million `a/` in a 20 MB page took 1 GB).
        let slash = UInt8(ascii: "/")
        let dot = UInt8(ascii: ".")
        var path = path
        let result = path.withUTF8 { bytes -> [UInt8] in
            var result: [UInt8] = []
            result.reserveCapacity(bytes.count)
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != slash { end += 1 }
                switch end - start {
                case 0: break
                case 1 where bytes[start] == dot: break
                case 2 where bytes[start] == dot && bytes[start + 1] == dot:
                    // Each byte is cut once at most: linear however many `..` there are.
                    result.removeSubrange((result.lastIndex(of: slash) ?? 0)...)
                default:
                    result.append(slash)
                    result.append(contentsOf: bytes[start..<end])
                }
                start = end + 1
            }
            return result
        }
        return result.isEmpty ? "/" : String(decoding: result, as: UTF8.self)
    }

    private static func isInside(_ path: String, _ folder: String) -> Bool {
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        return path.utf8.count > prefix.utf8.count && path.utf8.starts(with: prefix.utf8)
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
