import Foundation

/// Loads images into the cache the actor-cache way.
///
/// Guarantees:
/// - concurrent loads of one URL share one download (single flight): the first starts it,
///   later ones await the same task, as it is: its timeout, size cap and content type (what
///   is stored is the first's, as it would be had the download finished before they asked);
/// - after the download returns (an `await`: anything may have happened meanwhile), the bytes
///   are inserted only if the cache still has no entry for that URL, in the writer's
///   transaction (`cache[url] = cache[url, default: image]`);
/// - a URL already cached is never downloaded;
/// - only a whole image is stored: a 200 or 203 whose body is not empty and whose
///   Content-Type, if any, is `image/*` or an octet stream (else `HTTPError.notAnImage`, and
///   nothing is cached, so the next load tries again); a local feed's empty file is refused too;
/// - a cancelled load stops waiting at once; the download stops once every load waiting for it
///   was cancelled;
/// - at most `maximumConcurrentDownloads` downloads run at once; the others wait their turn;
/// - no download is larger than the cache's budget, whatever cap the caller gives.
actor ImagePipeline {
    enum Outcome: Sendable, Equatable {
        /// The cache held the url already (or got it from elsewhere while this download ran).
        case alreadyCached
        /// Downloaded and stored now: the bytes and content type stored, so that a caller can
        /// answer with them even if the entry is evicted (or deleted) before it reads it back.
        case downloaded(Data, contentType: String?)
    }

    /// Keyed by the url's exact UTF-8 bytes, as SQLite compares keys (Swift's `String ==` would
    /// merge canonically equivalent urls that the cache keeps apart).
    private var inFlight: [[UInt8]: SharedFlight<Outcome>] = [:]
    /// Downloads started (for tests: must equal the distinct URLs requested).
    private(set) var downloadCount = 0
    /// The cache's reads and writes, as the store hands them over.
    private let cache: ImageCacheAccess
    /// Downloads at once, at most: each holds its body in memory (up to its size cap, 32 MiB by
    /// default), so a grid of 100 distinct images asked for at once would hold them all. Six,
    /// as Nuke's ImagePipeline (`maxConcurrentDataLoadingTaskCount`); a sync's own
    /// `imageConcurrency` (4 by default) stays under it.
    static let maximumConcurrentDownloads = 6
    let downloads = AsyncLimiter(limit: maximumConcurrentDownloads)

    init(cache: ImageCacheAccess) {
        self.cache = cache
    }

    /// Makes sure `url` is cached, downloading it from `location` if needed. Stored with
    /// `contentType` when given (a feed's), else the response's. A `file:` location is read only
    /// with the `folder` of the local feed that named it, and only if its real path lies inside
    /// that folder.
    func load(
        _ url: String, from location: URL, contentType: String? = nil, fetcher: HTTPFetcher,
        maximumBytes: Int, timeout: Duration, within folder: URL? = nil
    ) async throws -> Outcome {
        let key = Array(url.utf8)
        if let flight = inFlight[key], flight.join() { return try await wait(for: flight, key: key) }
        let cache = cache
        // Bytes beyond the whole budget could never be stored: refused by their Content-Length,
        // or once that many arrived, rather than downloaded in full and then refused.
        let maximumBytes = min(maximumBytes, max(cache.budget, 0))
        let flight = SharedFlight<Outcome> {
            if try await cache.contains(url) { return .alreadyCached }
            let downloads = self.downloads
            try await downloads.acquire()
            let downloaded: Result<(Data, String?), any Error>
            do {
                await self.countDownload()
                downloaded = .success(
                    try await Self.download(
                        location, within: folder, fetcher: fetcher, maximumBytes: maximumBytes, timeout: timeout))
            } catch {
                downloaded = .failure(error)
            }
            await downloads.release()
            let (data, responseType) = try downloaded.get()
            let stored = contentType ?? responseType
            let inserted = try await cache.insertIfAbsent(url, data, stored)
            return inserted ? .downloaded(data, contentType: stored) : .alreadyCached
        }
        inFlight[key] = flight
        return try await wait(for: flight, key: key)
    }

    private func wait(for flight: SharedFlight<Outcome>, key: [UInt8]) async throws -> Outcome {
        // The last caller to leave a flight that is over removes it, if it is still this one.
        defer { if inFlight[key] === flight, flight.isSettled { inFlight[key] = nil } }
        return try await flight.value()
    }

    private func countDownload() { downloadCount += 1 }

    private static func download(
        _ location: URL, within folder: URL?, fetcher: HTTPFetcher, maximumBytes: Int, timeout: Duration
    ) async throws -> (Data, String?) {
        if location.isFileURL {
            guard let folder else {
                throw FeedSourceError.unreadable(path: location.path, reason: "a file is read only for a local feed; refused")
            }
            // Checked again here, where the file is opened (by its real path): the folder may
            // have changed since the feed was validated.
            let path = try LocalImagePath.realPathInside(location, folder: folder)
            let handle: FileHandle
            do {
                handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
            } catch {
                throw FeedSourceError.unreadable(path: location.path, reason: FeedLoader.reason(error))
            }
            defer { try? handle.close() }
            var data = Data()
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                data.append(chunk)
                if data.count > maximumBytes { throw FeedSourceError.tooLarge(source: location.path, limit: maximumBytes) }
            }
            // Cached, an empty file would stay an empty image until evicted.
            if data.isEmpty { throw FeedSourceError.unreadable(path: location.path, reason: "the file is empty, not an image") }
            return (data, nil)
        }
        let response = try await fetcher.fetch(
            HTTPRequest(url: Self.requestURL(location), timeout: timeout, maximumBytes: maximumBytes))
        let contentType = response.headers["content-type"]
        if let problem = Self.notAnImage(status: response.status, contentType: contentType, body: response.body) {
            throw HTTPError.notAnImage(url: location, reason: problem)
        }
        return (response.body, contentType)
    }

    /// `location` with its scheme in lower case (`HTTP:` is `http:`, RFC 3986 3.1), which
    /// URLSession needs: it failed `HTTP://...` as an unsupported URL, retried as a connection
    /// failure. The cache key stays as written.
    static func requestURL(_ location: URL) -> URL {
        guard let scheme = location.scheme, scheme != scheme.lowercased(),
            var components = URLComponents(url: location, resolvingAgainstBaseURL: false)
        else { return location }
        components.scheme = scheme.lowercased()
        return components.url ?? location
    }

    /// Why a response the fetcher returned (a 2xx or a 304) is not a whole image, or nil: it is
    /// cached until evicted, so a partial (206) or empty body, or a page (a soft 404's
    /// `200 text/html`), would stand for the image and never be downloaded again. A response
    /// without Content-Type is taken (many servers send none for images).
    static func notAnImage(status: Int, contentType: String?, body: Data) -> String? {
        guard status == 200 || status == 203 else {
            return "the server answered HTTP \(status), not 200 with the whole image"
        }
        if body.isEmpty { return "the body is empty" }
        if let contentType {
            let mediaType = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0]
                .trimmingCharacters(in: .whitespaces).lowercased()
            let isImage =
                mediaType.isEmpty || mediaType.hasPrefix("image/") || mediaType == "application/octet-stream"
                || mediaType == "binary/octet-stream"
            // The server's text: a reason, not a page of it.
            if !isImage { return "the server sent \(mediaType.prefix(100))" }
        }
        return nil
    }
}
