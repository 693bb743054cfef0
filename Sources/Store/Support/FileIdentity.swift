import Foundation

/// A file's device and inode: which file a path names. A path that names another file now
/// (removed, replaced, restored from a backup) has another identity, or none.
package struct FileIdentity: Sendable, Hashable {
    let device: UInt64
    let inode: UInt64

    /// What `path` names now; nil if nothing is there.
    package init?(of path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    /// What the open `descriptor` is; nil if `fstat` fails.
    package init?(ofDescriptor descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        self.init(status)
    }

    private init(_ status: stat) {
        (device, inode) = (UInt64(status.st_dev), UInt64(status.st_ino))
    }
}
