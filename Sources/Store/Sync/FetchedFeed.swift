import Foundation

/// The pages of a feed as read, before validation (which happens as they are applied): each
/// a file, read again in chunks by the validator.
struct FetchedFeed: Sendable {
    struct Page: Sendable {
        let url: URL
        /// How the page is named in error messages: a path or a URL without credentials.
        let name: String
        /// The page's bytes on disk: the local file itself, or its download in `spool`.
        let file: URL
        /// Bytes in `file` when it was read.
        let size: Int
        /// Problems with this page's `next` link, found while following it; reported after the
        /// page's own.
        var problems: [FeedProblem] = []
        /// A remote page's validators, for the next sync's conditional request.
        var validators: PageValidators?
    }

    /// True when every page answered 304 to its conditional request: there are no pages.
    var notModified = false
    var pages: [Page] = []
    /// Where downloaded pages are kept until the feed is no longer needed (nil: none was).
    var spool: SpoolFolder?

    /// What to remember of the pages for the next sync: nil for a local feed; empty (forget,
    /// so the next sync fetches every page) when a page cannot be revalidated later.
    var validators: [PageValidators]? {
        guard pages.first?.validators != nil else { return pages.isEmpty ? [] : nil }
        let remembered = pages.compactMap(\.validators)
        return remembered.count == pages.count ? remembered : []
    }
}

/// A remote page as sync remembers it between runs: the URL it requested, without
/// credentials, and the validators the answer carried.
struct PageValidators: Sendable, Equatable {
    var url: String
    var etag: String?
    var lastModified: String?

    /// Whether a conditional request can be made for it.
    var canRevalidate: Bool { etag != nil || lastModified != nil }

    /// The validators a response gives `url`. Without an ETag, a Last-Modified less than a
    /// second before the response's Date is not kept: "a Last-Modified time ... is implicitly
    /// weak unless it is at least one second prior to the Date" (RFC 9110, 8.8.2.2), since the
    /// file may change again within that second. A manifest published again in the second a
    /// client fetched it (a folder deleted and published anew) answered that client's next
    /// If-Modified-Since with 304, and the client stayed behind, "up to date".
    static func of(_ response: HTTPResponse, url: String) -> PageValidators {
        let etag = response.headers["etag"]
        var lastModified = response.headers["last-modified"]
        if etag == nil, let text = lastModified, let date = response.headers["date"],
            let modified = httpDate(text), let served = httpDate(date), served.timeIntervalSince(modified) < 1
        {
            lastModified = nil
        }
        return PageValidators(url: url, etag: etag, lastModified: lastModified)
    }

    /// An HTTP date (IMF-fixdate, the form servers send: `Sun, 06 Nov 1994 08:49:37 GMT`).
    static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }
}

extension FetchedFeed.Page {
    /// Manifests are small: a page larger than this is a version-1 feed, never read whole.
    static let largestManifest = 16 << 20

    /// Whether the page is a published feed's manifest (version 2), told by its content.
    var isManifest: Bool {
        guard size <= Self.largestManifest, let data = try? Data(contentsOf: file) else { return false }
        return PublishedManifest.looksLikeManifest(data)
    }
}

/// What sync remembers of a source between runs.
struct SourceState: Sendable, Equatable {
    /// Every page of the last sync, in order (empty when it must be fetched whole).
    var pages: [PageValidators] = []
    /// The policy of the last sync (nil before migration 0009).
    var policy: SyncPolicy?
    /// The kinds the last sync applied, as `SyncStateTable.kindsKey` writes them (nil before
    /// migration 0014).
    var kinds: String?
}
