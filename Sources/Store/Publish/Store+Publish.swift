import Foundation

extension Store {
    /// Publishes the store into `folder` as a version-2 feed (<doc:FeedFormat>): a manifest, a
    /// snapshot and change segments that any static HTTP server, object store or CDN can serve
    /// (everything but `manifest.json` is immutable). Each publish appends one segment with
    /// exactly what changed since the last one; with nothing changed, the folder is not touched.
    ///
    /// Crash-safe: new files are written under temporary names, flushed and renamed into place,
    /// and the manifest is replaced last, atomically; a publish killed at any moment leaves a
    /// folder that serves the previous or the new state. One publish per folder at a time: a
    /// second one, from this process or another, fails (after a second) with a `PublishError` while the
    /// first holds its lock (an exclusive `flock` on the folder). The store is read once the
    /// lock is held, so a publish that waited for another publishes the store as it is after it.
    ///
    /// Deletes from the folder only files it wrote (segments and snapshot pages, by name, and
    /// its own temporary files), once no manifest has named them for the grace period; never
    /// another file that shares the folder, nor the store. A folder it created (and its missing
    /// parents) it removes again if it fails once it holds the lock, as long as they are empty;
    /// a publish that finds its folder removed or replaced once it gets the lock makes or finds
    /// the path's folder again and locks that.
    public func publish(to folder: URL, options: PublishOptions = PublishOptions()) async throws -> PublishReport {
        let folder = folder.standardizedFileURL
        var created: CreatedFolders?
        // The lock first, then the store's snapshot and the publish's time: see `PublishLock`
        // (a publish that waited stamps its manifest and retirements with when it ran). A
        // publish that could not lock the folder leaves what it created: another one uses it.
        let lock = try await lockFolder(folder, created: &created)
        do {
            let publisher = Publisher(
                folder: folder, storePath: path, options: options, imageBudget: configuration.imageCacheBudget,
                now: configuration.clock.now(), handlers: RecordKinds.handlers(registering: configuration.recordTypes),
                appNamespace: configuration.appMigrations?.namespace)
            return try await read { db in try publisher.publish(db: db, holding: lock) }
        } catch {
            // A record the publish could not write (an app's invalid `feedValue`), a full disk:
            // the folder it made for the publish is not left behind, empty. Removed while the
            // lock is held, so never under another publish that got the lock first.
            withExtendedLifetime(lock) { created?.removeIfEmpty() }
            throw error
        }
    }

    /// Creates `folder` if it is missing (noting what it created in `created`) and takes its
    /// lock. If the folder was removed or replaced while this publish waited for the lock (a
    /// publish that created it failed, and removed it as it left), the path's folder is made or
    /// found again and locked: the lock must be on the folder the publish writes into.
    private func lockFolder(_ folder: URL, created: inout CreatedFolders?) async throws -> PublishLock {
        for _ in 0..<Self.folderLockAttempts {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
                guard isDirectory.boolValue else { throw PublishError(path: folder.path, reason: "not a folder") }
            } else {
                do {
                    let made = try CreatedFolders.create(folder.path)
                    created = created.map { made.adding($0) } ?? made
                } catch {
                    throw PublishError(path: folder.path, reason: "cannot create the folder: \(FeedLoader.reason(error))")
                }
            }
            if let lock = try await PublishLock.acquire(folder: folder) { return lock }
        }
        throw PublishError(
            path: folder.path,
            reason: "the folder was removed or replaced \(Self.folderLockAttempts) times while this publish waited for its lock")
    }

    /// How many times a publish locks its folder again when it finds the path names another
    /// folder once locked.
    static let folderLockAttempts = 8
}
