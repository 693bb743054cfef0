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
    ///
    /// `followingLinks`, for a file the user named (`--out`): a symbolic link is followed (the
    /// file it names is replaced, the link stays); a device, a FIFO or a socket (`/dev/null`, a
    /// named pipe) is written as it is, never replaced; `/dev/stdout`, `/dev/stderr`,
    /// `/dev/fd/N` and `/proc/self/fd/N` write to that open descriptor (as the shell's `>` or
    /// `>>` opened it). Otherwise (a file in a folder the store writes, such as a publish's)
    /// whatever has the name, a link included, is replaced.
    package static func write(_ data: Data, to path: String, followingLinks: Bool = false) throws {
        try write([(path, data)], followingLinks: followingLinks)
    }

    /// Throws the error a write to `path` would meet before its first byte: a folder there, a
    /// folder that does not exist or cannot be written, a link to nothing. (A write can still
    /// fail later: a full disk.)
    package static func checkWritable(_ path: String) throws {
        let writable: Bool
        switch try destination(of: path, followingLinks: true) {
        case .descriptor(let descriptor): writable = fcntl(descriptor, F_GETFL) >= 0
        case .inPlace: writable = access(path, W_OK) == 0
        case .replacing(let file): writable = access(PathName.folder(of: file), W_OK | X_OK) == 0
        }
        if !writable { throw OutputFileError(path: path, reason: String(cString: strerror(errno))) }
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
    package static func write(_ files: [(path: String, data: Data)], followingLinks: Bool = false) throws {
        var written: [PendingOutput] = []
        do {
            for (path, data) in files {
                let output = try begin(path, followingLinks: followingLinks)
                let failure: Int32
                do {
                    failure = try writeAll(data, to: output.descriptor)
                } catch {
                    abandon(output)
                    throw error
                }
                try finish(output, failure: failure)
                written.append(output)
            }
        } catch {
            discardFinished(written)
            throw error
        }
        try renameIntoPlace(written)
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

    /// The file a temporary file of this type stands for: NAME for `.NAME.tmp-XXXXXX` (XXXXXX the
    /// six letters or digits `mkstemp` chose), nil for any other name.
    package static func temporaryTarget(of name: String) -> String? {
        guard name.hasPrefix("."), name.count > ".tmp-XXXXXX".count + 1 else { return nil }
        let random = name.suffix(6)
        let marker = name.dropLast(6).suffix(".tmp-".count)
        guard marker == ".tmp-", random.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else { return nil }
        return String(name.dropFirst().dropLast(".tmp-XXXXXX".count))
    }

    /// Removes from `folder` the temporary files of writes that never finished (a process killed
    /// with SIGKILL, or a power cut, before its rename: nothing else removes them), for the files
    /// `targets` accepts, once unmodified for `age` seconds (a write under way is writing its
    /// file, or has just finished it). Returns the names removed.
    @discardableResult
    package static func removeStaleTemporaries(
        in folder: String, of targets: (String) -> Bool, olderThan age: TimeInterval, now: Date, storePath: String?
    ) -> [String] {
        removeFiles(
            in: folder, where: { temporaryTarget(of: $0).map(targets) ?? false }, unmodifiedFor: age, now: now,
            storePath: storePath)
    }

    /// The whole second of a file's modification time, from its `stat`.
    static func modificationSecond(_ info: stat) -> Int {
        #if canImport(Darwin)
            Int(info.st_mtimespec.tv_sec)
        #else
            Int(info.st_mtim.tv_sec)
        #endif
    }

    /// Removes from `folder` the files whose names `matches` accepts: plain files only (never a
    /// folder or a link), never the store's own (`storePath`'s, however named), never this
    /// process's writes under way, and with `age`, only those unmodified for that long. The one
    /// way the store deletes files it wrote earlier (an export's stale pages, killed runs'
    /// temporary files). Returns the names removed.
    @discardableResult
    package static func removeFiles(
        in folder: String, where matches: (String) -> Bool, unmodifiedFor age: TimeInterval? = nil, now: Date = Date(),
        storePath: String?
    ) -> [String] {
        var removed: [String] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where matches(name) {
            let path = folder + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            if let storePath, isStore(path, storePath: storePath) { continue }
            if inProgress.withLock({ $0.contains(path) }) { continue }
            if let age, now.timeIntervalSince(Date(timeIntervalSince1970: TimeInterval(modificationSecond(info)))) < age {
                continue
            }
            if unlink(path) == 0 { removed.append(name) }
        }
        return removed
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

    /// Writes all of `data` to `descriptor`, in chunks of 1 MiB with the calling task's
    /// cancellation checked between them (`CancellationError`); the errno of a failed write, or 0.
    private static func writeAll(_ data: Data, to descriptor: Int32) throws -> Int32 {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                if Task.isCancelled { throw CancellationError() }
                let chunk = min(buffer.count - offset, 1 << 20)
                let written = Foundation.write(descriptor, buffer.baseAddress! + offset, chunk)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return 0
        }
    }

    /// Starts an output to `path`: a new temporary file beside the file to replace, with the
    /// mode that file has (or a new file would get), or, for a device, a FIFO or a socket, the
    /// file itself opened for writing. Write into its descriptor, then `finish` it, then
    /// `renameIntoPlace`; or `abandon` it. Until it is renamed, `removeTemporaries()` removes
    /// its temporary file.
    ///
    /// `checkCancellation` is called while a FIFO waits for a reader (it throws to stop waiting):
    /// `begin` may run on a connection's queue, where the task's cancellation is not seen.
    static func begin(
        _ path: String, followingLinks: Bool, checkCancellation: () throws -> Void = { try Task.checkCancellation() }
    ) throws -> PendingOutput {
        let replaced: String
        switch try destination(of: path, followingLinks: followingLinks) {
        case .descriptor(let open):
            let descriptor = dup(open)
            guard descriptor >= 0 else { throw OutputFileError(path: path, reason: String(cString: strerror(errno))) }
            return PendingOutput(path: path, replaced: nil, temporary: nil, descriptor: descriptor)
        case .inPlace:
            // Not O_TRUNC: a device or FIFO has nothing to truncate. Not blocking: opening a FIFO
            // for writing waits for a reader, past any cancellation (Ctrl-C); without a reader it
            // fails with ENXIO, and is tried again every 50 ms until the task is cancelled.
            var descriptor = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
            while descriptor < 0, errno == ENXIO {
                try checkCancellation()
                usleep(50_000)
                descriptor = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
            }
            guard descriptor >= 0 else { throw OutputFileError(path: path, reason: String(cString: strerror(errno))) }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            return PendingOutput(path: path, replaced: nil, temporary: nil, descriptor: descriptor)
        case .replacing(let file):
            replaced = file
        }
        var template = Array(
            (PathName.folder(of: replaced) + "/." + PathName.lastComponent(of: replaced) + ".tmp-XXXXXX").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else { throw OutputFileError(path: path, reason: String(cString: strerror(errno))) }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        _ = inProgress.withLock { $0.insert(temporary) }
        // mkstemp makes it 0600: give it what a new file gets (0666 less the umask), or the mode
        // of the file it replaces.
        let mask = umask(0)
        umask(mask)
        var existing = stat()
        let mode = stat(replaced, &existing) == 0 ? existing.st_mode & 0o7777 : 0o666 & ~mask
        if fchmod(descriptor, mode) != 0 {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            discard(temporary)
            throw OutputFileError(path: path, reason: reason)
        }
        temporaryCreated?(temporary)
        return PendingOutput(path: path, replaced: replaced, temporary: temporary, descriptor: descriptor)
    }

    /// Flushes and closes an output's temporary file (or closes the device written in place);
    /// removes the temporary file and throws if that, or `failure` (an errno from writing it),
    /// went wrong.
    static func finish(_ output: PendingOutput, failure: Int32 = 0) throws {
        var failure = failure
        if output.temporary != nil, failure == 0, fsync(output.descriptor) != 0 { failure = errno }
        if close(output.descriptor) != 0, failure == 0 { failure = errno }
        guard failure == 0 else {
            if let temporary = output.temporary { discard(temporary) }
            throw OutputFileError(path: output.path, reason: String(cString: strerror(failure)))
        }
    }

    /// Ends an output that will not be finished (its descriptor still open): closes it and
    /// removes its temporary file.
    static func abandon(_ output: PendingOutput) {
        close(output.descriptor)
        if let temporary = output.temporary { discard(temporary) }
    }

    /// Removes the temporary files of finished outputs that will not be renamed into place.
    static func discardFinished(_ outputs: [PendingOutput]) {
        for temporary in outputs.compactMap(\.temporary) { discard(temporary) }
    }

    /// Renames finished outputs' temporary files into place, last to first (a feed's entry
    /// page changes last), then flushes their folders; the temporaries not renamed are removed.
    /// A cancelled task renames nothing (`CancellationError`): the old files stay. Outputs
    /// written in place have nothing to rename.
    static func renameIntoPlace(_ outputs: [PendingOutput]) throws {
        let files = outputs.compactMap { output in
            output.temporary.map { (temporary: $0, path: output.path, replaced: output.replaced ?? output.path) }
        }
        var pending = files
        defer { for file in pending { discard(file.temporary) } }
        if Task.isCancelled { throw CancellationError() }
        for index in files.indices.reversed() {
            guard rename(files[index].temporary, files[index].replaced) == 0 else {
                throw OutputFileError(path: files[index].path, reason: String(cString: strerror(errno)))
            }
            _ = inProgress.withLock { $0.remove(files[index].temporary) }
            pending.removeLast()
        }
        // The renames are durable once each folder is flushed.
        for folder in Set(files.map { PathName.folder(of: $0.replaced) }) {
            let descriptor = open(folder, O_RDONLY)
            if descriptor >= 0 {
                _ = fsync(descriptor)
                _ = close(descriptor)
            }
        }
    }

    /// How an output to `path` is written.
    private enum Destination {
        /// Through a temporary file renamed over this file: `path`, or the file a symbolic
        /// link at `path` names (the link stays a link).
        case replacing(String)
        /// Into `path` itself: a device, a FIFO or a socket, which a rename would replace by a
        /// plain file (as root, `--out /dev/null` would have made /dev/null a file).
        case inPlace
        /// Into this process's open descriptor (`/dev/stdout`, `/dev/fd/3`): the file the shell
        /// redirected it to, with the shell's flags (`>>` appends).
        case descriptor(Int32)
    }

    private static func destination(of path: String, followingLinks: Bool) throws -> Destination {
        var info = stat()
        guard followingLinks else {
            if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                throw OutputFileError(path: path, reason: "it is a folder")
            }
            return .replacing(path)
        }
        if let descriptor = openDescriptor(named: path) { return .descriptor(descriptor) }
        if stat(path, &info) == 0 {
            let type = info.st_mode & S_IFMT
            if type == S_IFDIR { throw OutputFileError(path: path, reason: "it is a folder") }
            if type != S_IFREG { return .inPlace }
            guard isSymbolicLink(path) else { return .replacing(path) }
            guard let real = realpath(path, nil) else {
                throw OutputFileError(path: path, reason: String(cString: strerror(errno)))
            }
            defer { free(real) }
            return .replacing(String(cString: real))
        }
        if errno == ENOENT, isSymbolicLink(path) {
            throw OutputFileError(path: path, reason: "it is a symbolic link to a file that does not exist")
        }
        // Missing (or not reachable: creating the temporary file says why).
        return .replacing(path)
    }

    /// The descriptor a path names by number, if it is open: `/dev/stdout` (1), `/dev/stderr`
    /// (2), `/dev/fd/N`, `/proc/self/fd/N`.
    private static func openDescriptor(named path: String) -> Int32? {
        let number: Int32?
        switch path {
        case "/dev/stdout": number = 1
        case "/dev/stderr": number = 2
        default:
            let prefix = ["/dev/fd/", "/proc/self/fd/"].first { path.hasPrefix($0) }
            number = prefix.flatMap { Int32(path.dropFirst($0.count)) }
        }
        guard let number, number >= 0, fcntl(number, F_GETFD) >= 0 else { return nil }
        return number
    }

    private static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    /// The same existing file (device and inode), or the same resolved path.
    private static func sameFile(_ a: String, _ b: String) -> Bool {
        var first = stat(), second = stat()
        if stat(a, &first) == 0, stat(b, &second) == 0 {
            return first.st_dev == second.st_dev && first.st_ino == second.st_ino
        }
        guard let resolvedA = PathName.resolvedFolder(of: a), let resolvedB = PathName.resolvedFolder(of: b) else {
            return false
        }
        return resolvedA == resolvedB
    }
}

/// An output being written (see `OutputFile.begin`).
struct PendingOutput {
    /// The path named by the caller, for messages.
    let path: String
    /// The file the temporary file replaces (`path`, or the file a symbolic link there names);
    /// nil when written in place.
    let replaced: String?
    /// The temporary file, nil when written in place.
    let temporary: String?
    /// Open for writing.
    let descriptor: Int32
}

/// An output file that could not be written; the old file, if any, is unchanged.
package struct OutputFileError: Error, Sendable, CustomStringConvertible, LocalizedError {
    package let path: String
    package let reason: String

    package var description: String { "\(path): cannot write: \(reason)" }
    package var errorDescription: String? { description }
}
