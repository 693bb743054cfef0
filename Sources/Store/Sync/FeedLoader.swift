import Foundation

/// Reads every page of a feed: the first, then each `next`, until none is left.
///
/// Pages are only read here, not validated: each page's `next` link is found by a quick scan
/// (`JSONParser.topLevelMember`), and the records are read and checked later, one at a time,
/// inside the write transaction (`FeedValidator`), so no page is ever held as a tree. Problems
/// found here (a `next` that loops or leaves the feed's scheme) are kept with their page, for
/// that validator to report after the page's own.
///
/// Remote pages go through `HTTPFetcher` (conditional request on the first page, retries, size
/// cap while reading, redirect rules). A remote page's `next` must stay http(s): a remote feed
/// can never make the store read a `file:` URL.
struct FeedLoader: Sendable {
    let fetcher: HTTPFetcher
    let options: SyncOptions

    func load(_ source: FeedSource, validators: SourceValidators?) async throws -> FetchedFeed {
        var fetched = FetchedFeed()
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
                var headers: [String: String] = [:]
                // The token is for the origin the user named: a `next` that leaves it (another
                // scheme, host or port) must not carry it. Redirects drop it the same way.
                if let token = options.bearerToken, !token.isEmpty, RedirectRule.isSameOrigin(pageURL, source.url) {
                    headers["Authorization"] = "Bearer \(token)"
                }
                if number == 1, let validators {
                    if let etag = validators.etag { headers["If-None-Match"] = etag }
                    if let lastModified = validators.lastModified { headers["If-Modified-Since"] = lastModified }
                }
                let response = try await fetcher.fetch(HTTPRequest(
                    url: pageURL, headers: headers, timeout: options.timeout, maximumBytes: options.maximumBytes))
                if response.status == 304 && number == 1 {
                    fetched.notModified = true
                    return fetched
                }
                guard (200...299).contains(response.status) else { throw HTTPError.status(url: pageURL, code: response.status) }
                if number == 1 {
                    fetched.etag = response.headers["etag"]
                    fetched.lastModified = response.headers["last-modified"]
                }
                page = FetchedFeed.Page(url: response.url, name: FeedSource.redacted(pageURL), body: response.body)
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

    private func resolveNext(_ next: String, from page: FetchedFeed.Page, source: FeedSource, problems: inout [FeedProblem]) -> URL? {
        guard let url = URL(string: next, relativeTo: page.url)?.absoluteURL, let scheme = url.scheme?.lowercased() else {
            problems.append(FeedProblem(source: page.name, path: "next", message: "'\(next)' is not a URL"))
            return nil
        }
        switch (source, scheme) {
        case (.remote, "http"), (.remote, "https"): return url
        case (.file, "file"): return url.standardizedFileURL
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
        // Anything left (a file that grew, or one whose size is unknown) is read in chunks.
        do {
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                body.append(chunk)
                if body.count > options.maximumBytes { throw FeedSourceError.tooLarge(source: path, limit: options.maximumBytes) }
            }
        } catch let error as FeedSourceError {
            throw error
        } catch {
            throw FeedSourceError.unreadable(path: path, reason: Self.reason(error))
        }
        return FetchedFeed.Page(url: url, name: path, body: body)
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
