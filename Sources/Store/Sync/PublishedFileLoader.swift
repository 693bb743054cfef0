import Foundation

/// Fetches the files a manifest names (beside the manifest: a local folder or the same http(s)
/// folder) and checks each one's size and SHA-256 against the manifest before anything is
/// applied. Any difference, a missing file or a wrong status fails the sync.
struct PublishedFileLoader: Sendable {
    let fetcher: HTTPFetcher
    let options: SyncOptions
    let source: FeedSource
    /// The manifest's URL as read (after redirects): names resolve against it.
    let manifestURL: URL

    struct Loaded: Sendable {
        let url: URL
        let name: String
        let body: Data
    }

    func load(_ file: PublishedManifest.File) async throws -> Loaded {
        // The name was checked to be a plain file name: it stays in the manifest's folder.
        let url = manifestURL.deletingLastPathComponent().appendingPathComponent(file.name)
        let name = source.url.isFileURL ? url.path : url.redacted
        func mismatch(_ message: String) -> ManifestError { ManifestError(source: name, path: "", message: message) }
        let body: Data
        switch source {
        case .file:
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw mismatch("missing: the manifest names this file but it cannot be read")
            }
            body = data
        case .remote:
            var headers: [String: String] = [:]
            if let token = options.bearerToken, !token.isEmpty, RedirectRule.isSameOrigin(url, source.url) {
                headers["Authorization"] = "Bearer \(token)"
            }
            let response: HTTPResponse
            do {
                // One byte more than the manifest says, so a longer file is seen as such.
                response = try await fetcher.fetch(
                    HTTPRequest(
                        url: url, headers: headers, timeout: options.timeout,
                        maximumBytes: min(file.size + 1, options.maximumBytes)))
            } catch let error as HTTPError {
                if case .tooLarge = error { throw mismatch("larger than the \(file.size) bytes the manifest says") }
                throw error
            }
            guard response.status == 200 else {
                throw mismatch(
                    response.status == 404 ? "missing (404): the manifest names this file" : "HTTP status \(response.status)")
            }
            body = response.body
        }
        guard body.count == file.size else { throw mismatch("\(body.count) bytes, but the manifest says \(file.size)") }
        let digest = SHA256.hexDigest(of: body)
        guard digest == file.sha256 else { throw mismatch("SHA-256 \(digest) differs from the manifest's \(file.sha256)") }
        options.progress?(.fetchedPage(number: 1, bytes: body.count))
        return Loaded(url: url, name: name, body: body)
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
