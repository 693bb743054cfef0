import Foundation

/// Reads every page of a feed: the first, then each `next`, until none is left.
///
/// Pages are only read here, not validated: each page's `next` link is found by a quick scan
/// (`JSONParser.topLevelMember`), and the records are read and checked later, one at a time,
/// inside the write transaction (`FeedValidator`), so no page is ever held as a tree. Problems
/// found here (a `next` that loops or leaves the feed's scheme) are kept with their page, for
/// that validator to report after the page's own.
///
/// Remote pages go through `HTTPFetcher` (conditional requests for every remembered page,
/// retries, size cap while reading, redirect rules). A remote page's `next` must stay http(s):
/// a remote feed can never make the store read a `file:` URL.
struct FeedLoader: Sendable {
    let fetcher: HTTPFetcher
    let options: SyncOptions

    /// `validators` are the pages remembered from the last sync (none: fetch every page). Each is
    /// revalidated in turn with a conditional request; when all answer 304 the feed is not
    /// modified. When one does not, every page is fetched in full, following `next` from the
    /// first (the page that answered is not asked twice): a changed page may change any record
    /// and the `next` links, and the whole feed is applied.
    func load(_ source: FeedSource, validators: [PageValidators]) async throws -> FetchedFeed {
        var fetched = FetchedFeed()
        var changed: (url: URL, response: HTTPResponse)?
        if case .remote = source, !validators.isEmpty, validators.allSatisfy(\.canRevalidate) {
            var modified = false
            for (index, page) in validators.enumerated() {
                // The first page is the source's own URL (it may carry credentials, never stored).
                guard let url = index == 0 ? source.url : URL(string: page.url) else {
                    modified = true
                    break
                }
                let response = try await fetchPage(url, source: source, conditional: page)
                if response.status == 304 { continue }
                changed = (url, response)
                modified = true
                break
            }
            if !modified {
                fetched.notModified = true
                return fetched
            }
        }

        var visited: [String: Int] = [:]
        var pageURL = source.url
        var number = 1
        while true {
            visited[pageURL.absoluteString] = number
            let page: FetchedFeed.Page
            switch source {
            case .file:
                page = try readFile(pageURL)
            case .remote:
                let response: HTTPResponse
                if let answered = changed, answered.url == pageURL {
                    response = answered.response
                    changed = nil
                } else {
                    response = try await fetchPage(pageURL, source: source, conditional: nil)
                }
                guard (200...299).contains(response.status) else { throw HTTPError.status(url: pageURL, code: response.status) }
                // A page URL with credentials is not remembered (they are never stored): without
                // it, the next sync fetches every page.
                let name = pageURL.redacted
                let remembered = number == 1 ? source.key : name == pageURL.absoluteString ? name : nil
                page = FetchedFeed.Page(
                    url: response.url, name: name, body: response.body,
                    validators: remembered.map {
                        PageValidators(url: $0, etag: response.headers["etag"], lastModified: response.headers["last-modified"])
                    })
            }
            fetched.pages.append(page)
            options.progress?(.fetchedPage(number: number, bytes: page.body.count))

            // A `next` that is not a string is reported by the validator.
            guard case .string(let next)? = JSONParser.topLevelMember("next", in: page.body) else { break }
            guard let nextURL = resolveNext(next, from: page, source: source, problems: &fetched.pages[fetched.pages.count - 1].problems) else { break }
            if let earlier = visited[nextURL.absoluteString] {
                fetched.pages[fetched.pages.count - 1].problems.append(
                    FeedProblem(source: page.name, path: "next", message: "'\(next)' loops back to page \(earlier)"))
                break
            }
            if number >= options.maximumPages {
                fetched.pages[fetched.pages.count - 1].problems.append(FeedProblem(
                    source: page.name, path: "next", message: "the feed has more than \(options.maximumPages) pages"))
                break
            }
            pageURL = nextURL
            number += 1
        }
        return fetched
    }

    /// One remote page; conditional when `validators` are given (a 304 is returned, not thrown).
    private func fetchPage(_ url: URL, source: FeedSource, conditional validators: PageValidators?) async throws -> HTTPResponse {
        var headers: [String: String] = [:]
        // The token is for the origin the user named: a `next` that leaves it (another
        // scheme, host or port) must not carry it. Redirects drop it the same way.
        if let token = options.bearerToken, !token.isEmpty, RedirectRule.isSameOrigin(url, source.url) {
            headers["Authorization"] = "Bearer \(token)"
        }
        if let validators {
            if let etag = validators.etag { headers["If-None-Match"] = etag }
            if let lastModified = validators.lastModified { headers["If-Modified-Since"] = lastModified }
        }
        return try await fetcher.fetch(HTTPRequest(
            url: url, headers: headers, timeout: options.timeout, maximumBytes: options.maximumBytes))
    }

    private func resolveNext(_ next: String, from page: FetchedFeed.Page, source: FeedSource, problems: inout [FeedProblem]) -> URL? {
        guard let url = URL(string: next, relativeTo: page.url)?.absoluteURL, let scheme = url.scheme?.lowercased() else {
            problems.append(FeedProblem(source: page.name, path: "next", message: "'\(next)' is not a URL"))
            return nil
        }
        switch (source, scheme) {
        case (.remote, "http"), (.remote, "https"): return url
        case (.file, "file"):
            // A local feed's pages, like its images, lie in its own folder: a `next` elsewhere
            // would read any file (and quote it in the errors).
            let location = url.standardizedFileURL
            if let reason = LocalImagePath.refusal(next, location: location, folder: source.url.deletingLastPathComponent()) {
                problems.append(FeedProblem(source: page.name, path: "next", message: "'\(next)' \(reason); refused"))
                return nil
            }
            return location
        default:
            problems.append(FeedProblem(
                source: page.name, path: "next",
                message: "'\(next)' leaves the feed's \(source.url.isFileURL ? "files" : "http(s) URLs"); refused"))
            return nil
        }
    }

    /// Reads a file, refusing it while reading once it exceeds the size cap.
    private func readFile(_ url: URL) throws -> FetchedFeed.Page {
        let path = url.path
        // A folder opens and "seeks" to a huge end offset: say what it is instead.
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw FeedSourceError.unreadable(path: path, reason: "it is a folder, not a feed file")
        }
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw FeedSourceError.unreadable(path: path, reason: Self.reason(error))
        }
        defer { try? handle.close() }
        var body = Data()
        // A regular file is read straight into one buffer of its size: no chunk copies, and no
        // growing by doubling, which would hold two copies of a large feed for a moment.
        if let size = try? handle.seekToEnd() {
            if size > UInt64(options.maximumBytes) { throw FeedSourceError.tooLarge(source: path, limit: options.maximumBytes) }
            do {
                try handle.seek(toOffset: 0)
            } catch {
                throw FeedSourceError.unreadable(path: path, reason: Self.reason(error))
            }
            body = try Self.read(Int(size), from: handle.fileDescriptor, path: path)
        }
        // Anything left (a file that grew, or one whose size is unknown: a pipe, stdin) is read in
        // chunks, waiting for each without blocking past a cancellation.
        do {
            try Self.waitUntilReadable(handle.fileDescriptor)
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                body.append(chunk)
                if body.count > options.maximumBytes { throw FeedSourceError.tooLarge(source: path, limit: options.maximumBytes) }
                try Self.waitUntilReadable(handle.fileDescriptor)
            }
        } catch let error as FeedSourceError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw FeedSourceError.unreadable(path: path, reason: Self.reason(error))
        }
        return FetchedFeed.Page(url: url, name: path, body: body)
    }

    /// Waits until `descriptor` has bytes (or its end) to read, checking every 100 ms whether the
    /// task was cancelled: a pipe or FIFO whose writer stalls cannot hold a cancelled sync. A
    /// regular file is always readable at once.
    private static func waitUntilReadable(_ descriptor: Int32) throws {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            try Task.checkCancellation()
            let ready = poll(&entry, 1, 100)
            if ready > 0 || (ready < 0 && errno != EINTR) { return }
        }
    }

    /// Reads up to `count` bytes (fewer at end of file) into a buffer of exactly that size.
    private static func read(_ count: Int, from descriptor: Int32, path: String) throws -> Data {
        guard count > 0, let memory = malloc(count) else { return Data() }
        var filled = 0
        while filled < count {
            let got = Foundation.read(descriptor, memory + filled, count - filled)
            if got == 0 { break }
            if got < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                free(memory)
                throw FeedSourceError.unreadable(path: path, reason: reason)
            }
            filled += got
        }
        return Data(bytesNoCopy: memory, count: filled, deallocator: .free)
    }

    static func reason(_ error: any Error) -> String {
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        return nsError.localizedDescription
    }
}
