import Foundation

/// Fetches the files a manifest names (beside the manifest: a local folder or the same http(s)
/// folder) and checks each one's size and SHA-256 against the manifest before anything is
/// applied. Any difference, a missing file or a wrong status fails the sync.
struct PublishedFileLoader: Sendable {
    /// The likely causes, each with its remedy: a folder uploaded manifest first, or a manifest
    /// older than the files the publisher keeps (retired after `--grace-seconds`): a cache that
    /// keeps manifest.json longer, or a publish during a sync that outlasted the grace period.
    static let missingReason =
        "missing (404): the manifest names this file; if the folder is being copied to the server, upload the files before manifest.json; "
        + "if this manifest is older than the publisher's grace period (a cache kept it: serve manifest.json with "
        + "Cache-Control: no-cache), or a publish retired the file during this sync, sync again"

    let fetcher: HTTPFetcher
    let options: SyncOptions
    let source: FeedSource
    /// The manifest's URL as read (after redirects): names resolve against it.
    let manifestURL: URL

    /// A file checked against the manifest, kept open: the published file itself (a local
    /// folder) or its download in the sync's spool folder. Never held in memory, and read again
    /// from the same open file, so the bytes applied are the bytes checked, whatever becomes of
    /// the name meanwhile (a publish retiring it, a file renamed over it).
    struct Loaded: Sendable {
        let url: URL
        let name: String
        let file: OpenedFile
        let size: Int

        /// The file's descriptor, positioned at its start, for one read of it at a time.
        func descriptorAtStart() throws -> Int32 {
            guard lseek(file.descriptor, 0, SEEK_SET) == 0 else {
                throw FeedSourceError.unreadable(path: name, reason: String(cString: strerror(errno)))
            }
            return file.descriptor
        }
    }

    /// An open file, closed when the last reference goes.
    final class OpenedFile: Sendable {
        let descriptor: Int32
        init(descriptor: Int32) { self.descriptor = descriptor }
        deinit { close(descriptor) }
    }

    /// Fetches `file` (a download goes into `spool`), then checks its size against the
    /// manifest's before reading it, and its SHA-256 reading it in chunks.
    func load(_ file: PublishedManifest.File, spool: SpoolFolder) async throws -> Loaded {
        // The name was checked to be a plain file name: it stays in the manifest's folder. A
        // local manifest's folder follows the rule of a version-1 feed's first page: one read
        // from stdin (or another pipe or device) has none. Its files were looked for in /dev.
        let folder =
            source.url.isFileURL ? LocalImagePath.folder(ofFirstPage: manifestURL) : manifestURL.deletingLastPathComponent()
        if folder == LocalImagePath.none {
            throw ManifestError(
                source: manifestURL.path, path: file.name,
                message:
                    "a manifest read from stdin (or another pipe or device) has no folder, so the files it names "
                    + "cannot be read; refused: sync the published folder, or its manifest.json by path")
        }
        // A remote name resolves as a relative reference does (RFC 3986, as a version-1 page's
        // `next` does): against the manifest's folder, without the manifest's query. An object
        // store's signed URL (`manifest.json?X-Amz-Signature=...`) signs that one object; sent
        // with another object's path, the signature does not match it, and a store such as S3
        // refuses the request (403) even for a public object. Path components were appended
        // instead, which kept the query and sent the manifest's signature with every file.
        let url =
            source.url.isFileURL
            ? folder.appendingPathComponent(file.name)
            : URL(string: file.name, relativeTo: manifestURL)?.absoluteURL ?? folder.appendingPathComponent(file.name)
        let name = source.url.isFileURL ? url.path : url.redacted
        func mismatch(_ message: String) -> ManifestError { ManifestError(source: name, path: "", message: message) }
        let path: String
        switch source {
        case .file:
            // A regular file inside the manifest's folder, symbolic links resolved: a link in the
            // folder to a file elsewhere is not read, nor a FIFO or a device.
            do {
                path = try LocalImagePath.realPathInside(url, folder: folder)
            } catch let error as FeedSourceError {
                if case .unreadable(_, let reason) = error, reason.hasPrefix("No such file") {
                    throw mismatch("missing: the manifest names this file but it cannot be read")
                }
                throw mismatch("\(error)")
            }
        case .remote:
            var headers: [String: String] = [:]
            if let token = options.bearerToken, !token.isEmpty, RedirectRule.isSameOrigin(url, source.url) {
                headers["Authorization"] = "Bearer \(token)"
            }
            let download = spool.url.appendingPathComponent("published-\(RandomIdentifier.uuidString())")
            let response: HTTPResponse
            do {
                // One byte more than the manifest says, so a longer file is seen as such.
                response = try await fetcher.fetch(
                    HTTPRequest(
                        url: url, headers: headers, timeout: options.timeout,
                        maximumBytes: min(file.size + 1, options.maximumBytes), bodyFile: download))
            } catch let error as HTTPError {
                if case .tooLarge = error { throw mismatch("larger than the \(file.size) bytes the manifest says") }
                // The fetcher fails any status outside 2xx and 304 itself: a 404 said only
                // "HTTP 404", where the likely cause is a manifest uploaded before its files.
                if case .status(_, 404) = error { throw mismatch(Self.missingReason) }
                throw error
            }
            guard response.status == 200 else {
                throw mismatch(response.status == 404 ? Self.missingReason : "HTTP status \(response.status)")
            }
            // A transport that answers in memory (an injected one) is spooled here.
            if !response.body.isEmpty || !FileManager.default.fileExists(atPath: download.path) {
                do {
                    try response.body.write(to: download)
                } catch {
                    throw FeedSourceError.unreadable(
                        path: download.path, reason: "cannot spool the download: \(FeedLoader.reason(error))")
                }
            }
            path = download.path
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw FeedSourceError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        let opened = OpenedFile(descriptor: descriptor)
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw mismatch("not a regular file")
        }
        let size = Int(status.st_size)
        guard size == file.size else { throw mismatch("\(size) bytes, but the manifest says \(file.size)") }
        if size > options.maximumBytes { throw FeedSourceError.tooLarge(source: name, limit: options.maximumBytes) }
        try Task.checkCancellation()
        let digest: String
        do {
            digest = try SHA256.hexDigest(ofDescriptor: descriptor)
        } catch {
            throw FeedSourceError.unreadable(path: path, reason: String(cString: strerror(error.code)))
        }
        guard digest == file.sha256 else { throw mismatch("SHA-256 \(digest) differs from the manifest's \(file.sha256)") }
        options.progress?(.fetchedPage(number: 1, bytes: size))
        return Loaded(url: url, name: name, file: opened, size: size)
    }
}

extension FeedSource {
    /// A local folder holding a `manifest.json` stands for that manifest.
    var resolvingPublishedFolder: FeedSource {
        guard case .file(let url) = self else { return self }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return self
        }
        return .file(url.appendingPathComponent(PublishedManifest.fileName).standardizedFileURL)
    }
}
