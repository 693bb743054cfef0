import Foundation

/// Files written for the user (an export, an image's bytes): never the store itself, and
/// replaced whole or not at all.
package enum OutputFile {
    /// True if writing `path` would overwrite the store at `storePath` or one of its -wal, -shm
    /// or -journal files, however either is spelled: compared by file identity (device and
    /// inode, so hard links and symbolic links count) and by resolved path (`./x/../s.sqlite`,
    /// for a file not created yet).
    package static func isStore(_ path: String, storePath: String) -> Bool {
        let companions = ["-wal", "-shm", "-journal"]
        if sameFile(path, storePath) { return true }
        // A companion of the store, or of any other name of it (a link's -wal is the store's).
        for suffix in companions {
            if sameFile(path, storePath + suffix) { return true }
            if path.hasSuffix(suffix), sameFile(String(path.dropLast(suffix.count)), storePath) { return true }
        }
        return false
    }

    /// Writes `data` to `path` through a temporary file in the same folder, flushed to disk and
    /// renamed into place: `path` holds either its old content or all of the new, never part.
    package static func write(_ data: Data, to path: String) throws {
        try write([(path, data)])
    }

    /// Writes several files, each through a temporary file like `write(_:to:)`: every file is
    /// written and flushed before any is renamed into place, and a target that cannot be
    /// replaced (a folder) is found before the first rename, so a failure leaves the old files
    /// as they were. Renamed last to first, so the first (a feed's entry page) changes last.
    ///
    /// Cancelling the calling task stops the writing (it is checked between chunks of 1 MiB)
    /// and throws `CancellationError` before anything is renamed: the old files stay, the
    /// temporary files are removed. A process that must exit at once (a second Ctrl-C) calls
    /// `removeTemporaries()` first.
    package static func write(_ files: [(path: String, data: Data)]) throws {
        var temporaries: [String] = []
        do {
            for (path, data) in files {
                if isFolder(path) { throw OutputFileError(path: path, reason: "it is a folder") }
                temporaries.append(try writeTemporary(data, besides: path))
            }
        } catch {
            for temporary in temporaries { discard(temporary) }
            throw error
        }
        try renameIntoPlace(zip(temporaries, files).map { ($0, $1.path) })
    }

    /// Removes every temporary file a `write` (or a streamed export) in this process is writing
    /// now, or has written and not yet renamed into place, for a process about to exit without
    /// unwinding; such a write then fails.
    package static func removeTemporaries() {
        let temporaries = inProgress.withLock { paths in
            defer { paths.removeAll() }
            return paths
        }
        for temporary in temporaries { unlink(temporary) }
    }

    /// The temporary files of the writes under way.
    private static let inProgress = LockedBox<Set<String>>([])

    /// For storectl's end-to-end tests only (`STORECTL_TEST_PAUSE_AFTER_TEMPORARY`): when set,
    /// called on the writing thread with each temporary file's path right after it is created,
    /// before a byte is written to it; the write waits while it runs. Nil in normal use.
    package static var temporaryCreated: (@Sendable (String) -> Void)? {
        get { hook.withLock { $0 } }
        set { hook.withLock { $0 = newValue } }
    }

    private static let hook = LockedBox<(@Sendable (String) -> Void)?>(nil)

    /// Removes a temporary file that will not be renamed into place.
    private static func discard(_ temporary: String) {
        unlink(temporary)
        _ = inProgress.withLock { $0.remove(temporary) }
    }

    /// Writes `data` to a new temporary file beside `path`, in chunks of 1 MiB with the calling
    /// task's cancellation checked between them (`CancellationError`, the file removed).
    private static func writeTemporary(_ data: Data, besides path: String) throws -> String {
        let (temporary, descriptor) = try createTemporary(besides: path)
        var failure: Int32 = 0, cancelled = false
        data.withUnsafeBytes { buffer in
            var offset = 0
            while failure == 0, offset < buffer.count {
                if Task.isCancelled {
                    cancelled = true
                    break
                }
                let chunk = min(buffer.count - offset, 1 << 20)
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, chunk)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                } else {
                    offset += written
                }
            }
        }
        if cancelled {
            close(descriptor)
            discard(temporary)
            throw CancellationError()
        }
        try finishTemporary(temporary, descriptor: descriptor, for: path, failure: failure)
        return temporary
    }

    /// A new temporary file beside `path`, open for writing, with the mode `path` has (or a new
    /// file would get). Write into it, then `finishTemporary` and `renameIntoPlace`. Until it is
    /// renamed, `removeTemporaries()` removes it.
    static func createTemporary(besides path: String) throws -> (path: String, descriptor: Int32) {
        if isFolder(path) { throw OutputFileError(path: path, reason: "it is a folder") }
        let name = (path as NSString).lastPathComponent
        var template = Array((folder(of: path) + "/." + name + ".tmp-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw OutputFileError(path: path, reason: String(cString: strerror(errno))) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        _ = inProgress.withLock { $0.insert(temporary) }
        // mkstemp makes it 0600: give it what a new file gets (0666 less the umask), or the mode
        // of the file it replaces.
        let mask = umask(0)
        umask(mask)
        var existing = stat()
        let mode = stat(path, &existing) == 0 ? existing.st_mode & 0o7777 : 0o666 & ~mask
        if fchmod(descriptor, mode) != 0 {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            discard(temporary)
            throw OutputFileError(path: path, reason: reason)
        }
        temporaryCreated?(temporary)
        return (temporary, descriptor)
    }

    /// Flushes and closes a temporary file; removes it and throws if that, or `failure` (an
    /// errno from writing it), went wrong.
    static func finishTemporary(_ temporary: String, descriptor: Int32, for path: String, failure: Int32 = 0) throws {
        var failure = failure
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        if close(descriptor) != 0, failure == 0 { failure = errno }
        guard failure == 0 else {
            discard(temporary)
            throw OutputFileError(path: path, reason: String(cString: strerror(failure)))
        }
    }

    /// Renames finished temporary files into place, last to first (a feed's entry page
    /// changes last), then flushes their folders; the temporaries not renamed are removed.
    /// A cancelled task renames nothing (`CancellationError`): the old files stay.
    static func renameIntoPlace(_ files: [(temporary: String, path: String)]) throws {
        var pending = files
        defer { for file in pending { discard(file.temporary) } }
        if Task.isCancelled { throw CancellationError() }
        for index in files.indices.reversed() {
            guard rename(files[index].temporary, files[index].path) == 0 else {
                throw OutputFileError(path: files[index].path, reason: String(cString: strerror(errno)))
            }
            _ = inProgress.withLock { $0.remove(files[index].temporary) }
            pending.removeLast()
        }
        // The renames are durable once each folder is flushed.
        for folder in Set(files.map { folder(of: $0.path) }) {
            let descriptor = open(folder, O_RDONLY)
            if descriptor >= 0 {
                _ = fsync(descriptor)
                _ = close(descriptor)
            }
        }
    }

    private static func folder(of path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    private static func isFolder(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The same existing file (device and inode), or the same resolved path.
    private static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat(), second = stat()
        if stat(a, &first) == 0, stat(b, &second) == 0 {
            return first.st_dev == second.st_dev && first.st_ino == second.st_ino
        }
        guard let resolvedA = resolved(a), let resolvedB = resolved(b) else { return false }
        return resolvedA == resolvedB
    }

    /// The absolute path with its folder's symbolic links, `.` and `..` resolved (the file
    /// itself need not exist); nil if the folder does not exist.
    private static func resolved(_ path: String) -> String? {
        guard let real = realpath(folder(of: path), nil) else { return nil }
        defer { free(real) }
        return String(cString: real) + "/" + (path as NSString).lastPathComponent
    }
}

/// An output file that could not be written; the old file, if any, is unchanged.
package struct OutputFileError: Error, Sendable, CustomStringConvertible, LocalizedError {
    package let path: String
    package let reason: String

    package var description: String { "\(path): cannot write: \(reason)" }
    package var errorDescription: String? { description }
}
