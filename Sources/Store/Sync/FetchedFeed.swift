import Foundation

/// The pages of a feed as read, before validation.
struct FetchedFeed: Sendable {
    struct Page: Sendable {
        let url: URL
        /// How the page is named in error messages: a path or a URL without credentials.
        let name: String
        let body: Data
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
