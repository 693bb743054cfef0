import Foundation

/// The database files the stores of this process have open or are opening: by where the path
/// leads (`Place`) from the start of `Store.open`, by identity (device and inode) once the
/// store's writer has opened the file.
///
/// Why: `fcntl` locks belong to the process, and closing *any* descriptor of a file drops all
/// of the process's locks on it ("all locks associated with a file for a given process are
/// removed when any file descriptor for that file is closed by that process", fcntl(2)).
/// SQLite's unix VFS keeps that rule for its own opens (os_unix.c, `unixInodeInfo` and its
/// deferred closes), not for ours. In WAL mode every connection holds a SHARED lock on the
/// database file for as long as it is open, and that lock is what keeps another process's
/// last close from checkpointing and deleting the `-wal` and `-shm` (it takes EXCLUSIVE on the
/// database first). So a descriptor this library opens on a database file of its own accord
/// (`StoreFile.checkHeader`, `Store.createFileIfMissing`, `WALFiles.removeOrphanedWALFiles`)
/// must not be closed while another store of this process has the file open: it is parked
/// here, and closed once the last store with that file has closed its connections
/// (`close(_:)`). And `WALFiles.removeOrphanedWALFiles` leaves the old file's `-wal` and
/// `-shm` to a store of this process that is opening their path or has the file now there
/// open (`Locked.isInUse(path:identity:)`), which its `fcntl` locks cannot tell it.
///
/// A file is known by what it is, not by how its path is spelled: two stores may open one file
/// through `dir/link/../s.sqlite` (the kernel takes `..` after the folder `link` names, not
/// after `link`), through a link to a folder, or through a hard link. Matched by the path
/// standardized as text (Foundation resolves a `..` through the real folder only in a path
/// that exists, not in that of a store about to create its file), such a store was missed,
/// and a replaced store's close removed the `-wal` and `-shm` it was opening.
///
/// A connection this process opened to the file other than through `Store` is not known here.
final class OpenDatabaseFiles: Sendable {
    /// Where a path being opened leads, however it is spelled: the real path of its file
    /// (symbolic links and `..` resolved by the system), or of its folder and its name before
    /// the file exists; and the file's identity if it exists (a hard link has another path).
    struct Place: Hashable, Sendable {
        let realPath: String
        let identity: FileIdentity?

        init(_ path: String) {
            realPath = Self.realPath(path)
            identity = FileIdentity(of: path)
        }

        private static func realPath(_ path: String) -> String {
            if let real = PathName.resolved(path) ?? PathName.resolvedFolder(of: path) { return real }
            // No such folder: nothing can be opened there; compared as text.
            return URL(fileURLWithPath: path).standardizedFileURL.path
        }
    }

    fileprivate struct Registry {
        /// Real paths of stores being opened, and how many of each.
        var opening: [String: Int] = [:]
        /// Identities of the files at those paths when their opens started, and how many of each.
        var openingFiles: [FileIdentity: Int] = [:]
        /// Identities of the database files of open (or opening) stores, and how many stores have each.
        var open: [FileIdentity: Int] = [:]
        /// Descriptors not closed because a store had their file open, by the file.
        var parked: [FileIdentity: [Int32]] = [:]
    }

    private static let registry = LockedBox(Registry())

    /// What this store has registered: where its path leads while opening, the identities of
    /// the files its writer opened.
    private let mine: LockedBox<(place: Place?, identities: Set<FileIdentity>)>

    /// Registers a store opening `path`: at the very start of `Store.open`, before any file is
    /// opened.
    init(opening path: String) {
        let place = Place(path)
        mine = LockedBox((place, []))
        Self.registry.withLock { Self.add(place, to: &$0) }
    }

    deinit { release() }

    /// Registers the file the store's writer has open: called once the writer's connection has
    /// opened the file, before it runs a statement that reads it (a statement takes SQLite's
    /// locks, and a descriptor closed by another opener meanwhile would drop them).
    func identify(_ identity: FileIdentity?) {
        guard let identity else { return }
        let added = mine.withLock { $0.identities.insert(identity).inserted }
        if added { Self.registry.withLock { $0.open[identity, default: 0] += 1 } }
    }

    /// The store has opened: its path no longer counts as being opened (its identities do).
    func opened() {
        guard
            let place = mine.withLock({ mine in
                defer { mine.place = nil }; return mine.place
            })
        else { return }
        Self.registry.withLock { Self.remove(place, from: &$0) }
    }

    /// The store has closed all its connections, or failed to open: unregisters it, and
    /// closes the descriptors parked on a file no store of this process has open any more.
    /// Later calls do nothing.
    func release() {
        let (place, identities) = mine.withLock { mine in
            defer { mine = (nil, []) }
            return mine
        }
        // Closed with the lock held: a store that identified the file just after would have
        // its locks dropped by a close made after the lock was let go.
        Self.registry.withLock { registry in
            if let place { Self.remove(place, from: &registry) }
            for identity in identities {
                Self.remove(identity, from: &registry.open)
                if registry.open[identity] == nil, let parked = registry.parked.removeValue(forKey: identity) {
                    for descriptor in parked { Foundation.close(descriptor) }
                }
            }
        }
    }

    /// Closes `descriptor`, a descriptor of a database file this library opened itself (see
    /// `Locked.close(_:)`).
    static func close(_ descriptor: Int32) {
        whileLocked { $0.close(descriptor) }
    }

    /// How many descriptors are parked on `path`'s file now (for tests).
    static func parkedCount(path: String) -> Int {
        guard let identity = FileIdentity(of: path) else { return 0 }
        return registry.withLock { $0.parked[identity]?.count ?? 0 }
    }

    /// A descriptor parked on the file at `path` now (by its identity), taken out of the park:
    /// the caller reads through it and gives it back with `close(_:)`, which parks it again
    /// while a store has the file open. Nil if none is parked for that file.
    static func borrowParked(path: String) -> Int32? {
        guard let identity = FileIdentity(of: path) else { return nil }
        return registry.withLock { registry in
            guard var parked = registry.parked[identity], let descriptor = parked.popLast() else { return nil }
            registry.parked[identity] = parked.isEmpty ? nil : parked
            return descriptor
        }
    }

    /// Runs `body` with the registry's lock held: no store starts opening, identifies its
    /// file or releases it until `body` returns. For `WALFiles.removeOrphanedWALFiles`, which
    /// must not unlink files such a store uses.
    static func whileLocked<T>(_ body: (inout Locked) throws -> T) rethrows -> T {
        try registry.withLock { registry in
            var locked = Locked(registry: registry)
            defer { registry = locked.registry }
            return try body(&locked)
        }
    }

    /// The registry, while its lock is held (`whileLocked`).
    struct Locked {
        fileprivate var registry: Registry

        /// Whether a store of this process is opening `path` (nil: not asked), by whatever path
        /// leads to the same place or to the file there now (`Place`), or has the file
        /// `identity` open (nil: not asked).
        func isInUse(path: String?, identity: FileIdentity?) -> Bool {
            if let path {
                let place = Place(path)
                if registry.opening[place.realPath] != nil { return true }
                if let file = place.identity, registry.openingFiles[file] != nil { return true }
            }
            if let identity, registry.open[identity] != nil { return true }
            return false
        }

        /// Closes `descriptor`, a descriptor of a database file this library opened itself,
        /// unless a store of this process has that file open (or is opening it and has
        /// identified it): then it is kept open until the last such store has released it, so
        /// that its close does not drop that store's connections' `fcntl` locks. Decided and
        /// closed with the registry's lock held, so no store identifies the file between.
        mutating func close(_ descriptor: Int32) {
            guard descriptor >= 0 else { return }
            if let identity = FileIdentity(ofDescriptor: descriptor), registry.open[identity] != nil {
                registry.parked[identity, default: []].append(descriptor)
            } else {
                Foundation.close(descriptor)
            }
        }
    }

    private static func add(_ place: Place, to registry: inout Registry) {
        registry.opening[place.realPath, default: 0] += 1
        if let file = place.identity { registry.openingFiles[file, default: 0] += 1 }
    }

    private static func remove(_ place: Place, from registry: inout Registry) {
        remove(place.realPath, from: &registry.opening)
        if let file = place.identity { remove(file, from: &registry.openingFiles) }
    }

    private static func remove<Key: Hashable>(_ key: Key, from counts: inout [Key: Int]) {
        let left = (counts[key] ?? 1) - 1
        counts[key] = left > 0 ? left : nil
    }
}
