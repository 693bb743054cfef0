import Foundation

/// The lock that keeps two publishes out of one folder at once: an exclusive `flock` on the
/// folder's `.publish.lock`, taken before the manifest is read and held until the new one is in
/// place. Two publishes interleaved would each write a manifest naming its own files and retire
/// the other's: the folder would name files it no longer has.
///
/// `flock` locks belong to the open file: the lock ends when the publish closes it, and when its
/// process dies, however it dies, so a killed publish never leaves the folder locked.
final class PublishLock {
    static let fileName = ".publish.lock"

    private let descriptor: Int32

    /// Takes the lock, or throws at once if another publish holds it.
    init(folder: URL) throws {
        let path = folder.appendingPathComponent(Self.fileName).path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else {
            throw PublishError(path: path, reason: "cannot open the folder's lock file: \(String(cString: strerror(errno)))")
        }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw PublishError(
                path: folder.path,
                reason: busy
                    ? "another publish into this folder is under way (it holds \(Self.fileName)); try again once it has ended"
                    : "cannot lock \(Self.fileName): \(reason)")
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }
}
