import Foundation

/// Reads every page of a feed: the first, then each `next`, until none is left.
///
/// Pages are only read here, not validated: each page's `next` link is found by a skim of the
/// page (`JSONParser.topLevelMember`), and the records are read and checked later, one at a
/// time, while the write transaction applies them (`FeedValidator`, on `FeedPipeline`'s reader
/// thread). No page is ever held in memory: a
/// local file is read where it lies; a download, or a pipe (stdin), is written to a file in a
/// `SpoolFolder` as it arrives (size-capped), and every page is read from disk in chunks. Problems
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
        var changed: (url: URL, response: HTTPResponse, file: URL)?
        if case .remote = source, !validators.isEmpty, validators.allSatisfy(\.canRevalidate) {
            var modified = false
            for (index, page) in validators.enumerated() {
                // The first page is the source's own URL (it may carry credentials, never stored).
                guard let url = index == 0 ? source.url : URL(string: page.url) else {
                    modified = true
                    break
                }
                let file = try spoolFile(&fetched)
                let response = try await fetchPage(url, source: source, conditional: page, into: file)
                if response.status == 304 { continue }
                changed = (url, response, file)
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
            // A local feed's pages are read without a suspension point: a cancelled sync (every
            // caller of a shared fetch gone) read and skimmed the rest of its pages all the same.
            try Task.checkCancellation()
            visited[pageURL.absoluteString] = number
            let page: FetchedFeed.Page
            switch source {
            case .file:
                page = try readFile(pageURL, spool: &fetched)
            case .remote:
                let response: HTTPResponse
                let file: URL
                if let answered = changed, answered.url == pageURL {
                    (response, file) = (answered.response, answered.file)
                    changed = nil
                } else {
                    file = try spoolFile(&fetched)
                    response = try await fetchPage(pageURL, source: source, conditional: nil, into: file)
                }
                guard (200...299).contains(response.status) else { throw HTTPError.status(url: pageURL, code: response.status) }
                // A page URL with credentials (a user name, a signature) is not remembered (they
                // are never stored): without it, the next sync fetches every page.
                let name = pageURL.redacted
                let remembered = number == 1 ? source.key : name == pageURL.absoluteString ? name : nil
                page = FetchedFeed.Page(
                    url: response.url, name: name, file: file, size: Self.size(of: file),
                    validators: remembered.map {
                        PageValidators.of(response, url: $0)
                    })
            }
            fetched.pages.append(page)
            options.progress?(.fetchedPage(number: number, bytes: page.size))

            // A `next` that is not a string is reported by the validator.
            try Task.checkCancellation()
            guard case .string(let next)? = Self.nextLink(of: page) else { break }
            guard
                let nextURL = resolveNext(
                    next, from: page, source: source, problems: &fetched.pages[fetched.pages.count - 1].problems)
            else { break }
            if let earlier = visited[nextURL.absoluteString] {
                fetched.pages[fetched.pages.count - 1].problems.append(
                    FeedProblem(
                        source: page.name, path: "next", message: "\(FeedFields.quote(next)) loops back to page \(earlier)"))
                break
            }
            if number >= options.maximumPages {
                fetched.pages[fetched.pages.count - 1].problems.append(
                    FeedProblem(
                        source: page.name, path: "next", message: "the feed has more than \(options.maximumPages) pages"))
                break
            }
            pageURL = nextURL
            number += 1
        }
        return fetched
    }

    /// A new file in the fetch's spool folder (created with the first one).
    private func spoolFile(_ fetched: inout FetchedFeed) throws -> URL {
        let spool = try fetched.spool ?? SpoolFolder()
        fetched.spool = spool
        return spool.url.appendingPathComponent("page-\(RandomIdentifier.uuidString()).json")
    }

    /// The page's `next` member, skimmed from its file in chunks.
    private static func nextLink(of page: FetchedFeed.Page) -> JSONValue? {
        guard let handle = try? FileHandle(forReadingFrom: page.file) else { return nil }
        defer { try? handle.close() }
        // Most pages have no `next`: a byte search proves it without parsing the page.
        guard JSONChunkReader.mayHoldName("next", descriptor: handle.fileDescriptor) else { return nil }
        return JSONParser.topLevelMember("next", in: JSONChunkReader(descriptor: handle.fileDescriptor))
    }

    private static func size(of file: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? Int) ?? 0
    }

    /// One remote page, its body written to `file`; conditional when `validators` are given
    /// (a 304 is returned, not thrown).
    private func fetchPage(_ url: URL, source: FeedSource, conditional validators: PageValidators?, into file: URL) async throws
        -> HTTPResponse
    {
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
        let response = try await fetcher.fetch(
            HTTPRequest(
                url: url, headers: headers, timeout: options.timeout, maximumBytes: options.maximumBytes, bodyFile: file))
        // A transport that answers in memory (an injected one) is spooled here, under the same cap.
        if !response.body.isEmpty || !FileManager.default.fileExists(atPath: file.path) {
            guard response.body.count <= options.maximumBytes else {
                throw HTTPError.tooLarge(url: response.url, limit: options.maximumBytes)
            }
            do {
                try response.body.write(to: file)
            } catch {
                throw FeedSourceError.unreadable(path: file.path, reason: "cannot spool the download: \(Self.reason(error))")
            }
        }
        return response
    }

    /// The longest URL a `next` may lead to, in bytes (once resolved against its page). A page's
    /// URL names it in every problem found in it (and the sync's history keeps the error): a
    /// `next` of 100 KB made the error of a page's hundred problems 10 MB, and a relative one
    /// grows with each page it is resolved against. Servers refuse far shorter request lines
    /// (8 KiB in nginx), and a path is at most 4,096 bytes.
    static let longestPageURL = 8_192

    private func resolveNext(_ next: String, from page: FetchedFeed.Page, source: FeedSource, problems: inout [FeedProblem])
        -> URL?
    {
        let quoted = FeedFields.quote(next)
        guard let url = URL(string: next, relativeTo: page.url)?.absoluteURL, let scheme = url.scheme?.lowercased() else {
            problems.append(FeedProblem(source: page.name, path: "next", message: "\(quoted) is not a URL"))
            return nil
        }
        let length = url.absoluteString.utf8.count
        guard length <= Self.longestPageURL else {
            problems.append(
                FeedProblem(
                    source: page.name, path: "next",
                    message: "\(quoted) leads to a URL of \(length) bytes, more than \(Self.longestPageURL); refused"))
            return nil
        }
        switch (source, scheme) {
        case (.remote, "http"), (.remote, "https"): return url
        case (.file, "file"):
            // A local feed's pages, like its images, lie in its own folder: a `next` elsewhere
            // would read any file (and quote it in the errors).
            let location = url.standardizedFileURL
            if let reason = LocalImagePath.refusal(
                next, location: location, folder: LocalImagePath.folder(ofFirstPage: source.url))
            {
                problems.append(FeedProblem(source: page.name, path: "next", message: "\(quoted) \(reason); refused"))
                return nil
            }
            return location
        default:
            problems.append(
                FeedProblem(
                    source: page.name, path: "next",
                    message: "\(quoted) leaves the feed's \(source.url.isFileURL ? "files" : "http(s) URLs"); refused"))
            return nil
        }
    }

    /// A local page: a regular file is read where it lies (refused if over the size cap); a
    /// pipe or FIFO (stdin) is copied in chunks to the spool folder, refused once it exceeds
    /// the cap, so the validator can read it from disk like any other page.
    private func readFile(_ url: URL, spool fetched: inout FetchedFeed) throws -> FetchedFeed.Page {
        let path = url.path
        // A folder opens and "seeks" to a huge end offset: say what it is instead.
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw FeedSourceError.unreadable(path: path, reason: "it is a folder, not a feed file")
        }
        // Not blocking: opening a FIFO waits for a writer, past any cancellation; the reads below
        // wait for it instead (`waitUntilReadable`).
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw FeedSourceError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        defer { try? handle.close() }
        var status = stat()
        // A regular file is read where it lies; /dev/stdin and the like are copied even when they
        // name a regular file (reopening one may share its offset, or not be possible).
        if !path.hasPrefix("/dev/"), fstat(handle.fileDescriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG {
            let size = Int(status.st_size)
            if size > options.maximumBytes { throw FeedSourceError.tooLarge(source: path, limit: options.maximumBytes) }
            return FetchedFeed.Page(url: url, name: path, file: url, size: size)
        }
        let file = try spoolFile(&fetched)
        guard FileManager.default.createFile(atPath: file.path, contents: nil), let output = try? FileHandle(forWritingTo: file)
        else {
            throw FeedSourceError.unreadable(path: path, reason: "cannot create the temporary file \(file.path)")
        }
        defer { try? output.close() }
        var size = 0
        // Read in chunks, waiting for each without blocking past a cancellation.
        do {
            try Descriptor.waitUntilReadable(handle.fileDescriptor)
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                try Task.checkCancellation()
                size += chunk.count
                if size > options.maximumBytes { throw FeedSourceError.tooLarge(source: path, limit: options.maximumBytes) }
                do {
                    try output.write(contentsOf: chunk)
                } catch {
                    // The spool's fault (a full TMPDIR), not the input's.
                    throw FeedSourceError.unreadable(
                        path: path, reason: "cannot write the temporary copy \(file.path) (TMPDIR): \(Self.reason(error))")
                }
                try Descriptor.waitUntilReadable(handle.fileDescriptor)
            }
        } catch let error as FeedSourceError {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            throw FeedSourceError.unreadable(path: path, reason: Self.reason(error))
        }
        return FetchedFeed.Page(url: url, name: path, file: file, size: size)
    }

    static func reason(_ error: any Error) -> String { SystemErrorText.reason(error) }
}
