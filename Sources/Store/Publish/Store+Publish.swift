import Foundation

extension Store {
    /// Publishes the store into `folder` as a version-2 feed (<doc:FeedFormat>): a manifest, a
    /// snapshot and change segments that any static HTTP server, object store or CDN can serve
    /// (everything but `manifest.json` is immutable). Each publish appends one segment with
    /// exactly what changed since the last one; with nothing changed, the folder is not touched.
    ///
    /// Crash-safe: new files are written under temporary names, flushed and renamed into place,
    /// and the manifest is replaced last, atomically; a publish killed at any moment leaves a
    /// folder that serves the previous or the new state. One publisher per folder at a time.
    public func publish(to folder: URL, options: PublishOptions = PublishOptions()) async throws -> PublishReport {
        let folder = folder.standardizedFileURL
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw PublishError(path: folder.path, reason: "not a folder") }
        } else {
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw PublishError(path: folder.path, reason: "cannot create the folder: \(FeedLoader.reason(error))")
            }
        }
        let publisher = Publisher(
            folder: folder, options: options, imageBudget: configuration.imageCacheBudget,
            now: configuration.clock.now(), handlers: RecordKinds.handlers(registering: configuration.recordTypes))
        return try await read { db in try publisher.publish(db: db) }
    }
}
