import Foundation

/// The lock that keeps two publishes out of one folder at once: an exclusive `flock` on the
/// folder itself (its open directory), taken before the manifest is read and held until the new
/// one is in place. Two publishes interleaved would each write a manifest naming its own files
/// and retire the other's: the folder would name files it no longer has.
///
/// On the folder, not on a lock file in it: the folder gains no file (a served folder stays as
/// published), and anyone who may publish into it (read and write it) may lock it, whoever
/// created it. `flock` locks belong to the open file: the lock ends when the publish closes it,
/// and when its process dies, however it dies, so a killed publish never leaves the folder locked.
final class PublishLock {
    private let descriptor: Int32

    /// Takes the lock, or throws if another publish holds it for more than a second.
    init(folder: URL) throws {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw PublishError(path: folder.path, reason: "cannot open the folder: \(String(cString: strerror(errno)))")
        }
        // A held lock is tried again for up to a second before the publish gives up: a process
        // this one starts (any thread's `posix_spawn`) holds a copy of every descriptor until it
        // execs, the lock of a publish that has just ended included.
        let deadline = ContinuousClock.now + .seconds(1)
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK, ContinuousClock.now < deadline {
                usleep(10_000)
                continue
            }
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw PublishError(
                path: folder.path,
                reason: busy
                    ? "another publish into this folder is under way; try again once it has ended"
                    : "cannot lock the folder: \(reason)")
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }
}
