import Foundation

/// The lock that keeps two publishes out of one folder at once: an exclusive `flock` on the
/// folder itself (its open directory), taken before the store is read and held until the new
/// manifest is in place. Two publishes interleaved would each write a manifest naming its own
/// files and retire the other's: the folder would name files it no longer has. And the store
/// is read (its snapshot taken) only once the lock is held: a publish that read it while it
/// waited found the manifest of the publish it waited for ahead of its snapshot, and published
/// its older state as a new generation (clients read it whole, and lost what it lacked).
///
/// On the folder, not on a lock file in it: the folder gains no file (a served folder stays as
/// published), and anyone who may publish into it (read and write it) may lock it, whoever
/// created it. `flock` locks belong to the open file: the lock ends when the publish closes it,
/// and when its process dies, however it dies, so a killed publish never leaves the folder locked.
package final class PublishLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    /// Takes the lock, or throws a `PublishError` if another holds it for more than a second.
    /// Waits by sleeping its task (never a thread of Swift's pool); cancelled, it throws
    /// `CancellationError`. Nil if, once locked, the folder is no longer the one `folder`
    /// names (removed or replaced while this waited): the caller locks the path's folder again.
    static func acquire(folder: URL) async throws -> PublishLock? {
        let descriptor = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw PublishError(path: folder.path, reason: "cannot open the folder: \(String(cString: strerror(errno)))")
        }
        // A held lock is tried again for up to a second before the publish gives up: a process
        // this one starts (any thread's `posix_spawn`) holds a copy of every descriptor until it
        // execs, the lock of a publish that has just ended included.
        var deadline = ContinuousClock.now + .seconds(1)
        var told = false
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                guard Self.pathNames(descriptor, folder.path) else {
                    close(descriptor)
                    return nil
                }
                return PublishLock(descriptor: descriptor)
            }
            let error = errno
            if error == EINTR { continue }
            if error == EWOULDBLOCK, !told, let foundHeld = Self.foundHeld {
                told = true
                foundHeld(folder.path)
                deadline = .now + .seconds(86_400 * 365)
            }
            guard error == EWOULDBLOCK, ContinuousClock.now < deadline else {
                close(descriptor)
                throw PublishError(
                    path: folder.path,
                    reason: error == EWOULDBLOCK
                        ? "another publish (or another program) holds the lock on this folder; try again once it has ended"
                        : "cannot lock the folder: \(String(cString: strerror(error)))")
            }
            do {
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                close(descriptor)
                throw error
            }
        }
    }

    /// Whether `path` names the folder open as `descriptor` (same device and inode).
    private static func pathNames(_ descriptor: Int32, _ path: String) -> Bool {
        var locked = stat()
        var named = stat()
        return fstat(descriptor, &locked) == 0 && stat(path, &named) == 0 && locked.st_dev == named.st_dev
            && locked.st_ino == named.st_ino
    }

    deinit {
        close(descriptor)
    }

    /// For storectl's end-to-end tests only (`STORECTL_TEST_WAIT_FOR_PUBLISH_LOCK`): when set, a
    /// publish that finds the folder's lock held calls it once with the folder's path, then
    /// waits for the lock as long as it takes (no one-second limit), so that a test can act
    /// while the publish waits. Nil in normal use.
    package static var foundHeld: (@Sendable (String) -> Void)? {
        get { hook.withLock { $0 } }
        set { hook.withLock { $0 = newValue } }
    }

    private static let hook = LockedBox<(@Sendable (String) -> Void)?>(nil)
}
