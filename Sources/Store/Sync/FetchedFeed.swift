import Foundation

/// The pages of a feed as read, before validation (which happens as they are applied).
struct FetchedFeed: Sendable {
    struct Page: Sendable {
        let url: URL
        /// How the page is named in error messages: a path or a URL without credentials.
        let name: String
        let body: Data
        /// Problems with this page's `next` link, found while following it; reported after the
        /// page's own.
        var problems: [FeedProblem] = []
    }

    /// True when the server answered 304 to the conditional request: there are no pages.
    var notModified = false
    var pages: [Page] = []
    /// The first page's validators, stored for the next conditional request.
    var etag: String?
    var lastModified: String?
}

/// What sync remembers of a source between runs.
struct SourceValidators: Sendable, Equatable {
    var etag: String?
    var lastModified: String?
}
