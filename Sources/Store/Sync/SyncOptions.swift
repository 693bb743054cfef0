import Foundation

/// How one sync runs. The defaults suit a feed of any size from a trusted server; every limit
/// is checked while reading, and a sync that passes one fails and writes nothing.
public struct SyncOptions: Sendable {
    /// How a record that exists both locally and in the feed is settled.
    public var policy: SyncPolicy = .keepExisting
    /// Compute the report; write nothing.
    public var dryRun = false
    /// The most bytes read for one page or published file (images have their own cap,
    /// `maximumImageBytes`); checked while reading, so a larger one fails the sync
    /// (`FeedSourceError.tooLarge` for a file, `HTTPError.tooLarge` over HTTP) without being
    /// held whole.
    public var maximumBytes = 256 * 1024 * 1024
    /// The most bytes of one downloaded image (32 MiB by default); checked while reading (a
    /// larger Content-Length before the body is read), so a larger image is a failed image
    /// (`HTTPError.tooLarge`, or `FeedSourceError.tooLarge` for a local feed's file), reported
    /// and tried again next sync, not a failed sync.
    public var maximumImageBytes = 32 * 1024 * 1024
    /// How long one HTTP request (a page, an image) may take to get an answer, retries
    /// included: an attempt fails after this long without bytes, and no retry starts once this
    /// long has passed since the first (see `HTTPFetcher`).
    public var timeout: Duration = .seconds(30)
    /// Sent as `Authorization: Bearer ...` to the first page's origin (scheme, host and port)
    /// only: not to pages or redirects elsewhere, nor with images. Never printed, logged or stored.
    public var bearerToken: String?
    /// Fetch every page unconditionally (no If-None-Match / If-Modified-Since) and reconcile,
    /// even if the server would say nothing changed. Implied when `policy` differs from the
    /// last sync's from the same source.
    public var force = false
    /// The most pages followed through `next`.
    public var maximumPages = 10_000
    /// Image downloads at once.
    public var imageConcurrency = 4
    /// Told of progress (pages, records, images) as the sync goes.
    public var progress: (@Sendable (SyncProgress) -> Void)?

    /// Options with the given policy and dry-run setting; every other option at its default.
    public init(policy: SyncPolicy = .keepExisting, dryRun: Bool = false) {
        self.policy = policy
        self.dryRun = dryRun
    }
}

/// A step of a sync, for progress displays.
public enum SyncProgress: Sendable, Equatable {
    /// A page was read: its number (from 1) and size.
    case fetchedPage(number: Int, bytes: Int)
    /// Every page was read and validated: this many records and tombstones. Records are
    /// validated as they are applied, so this comes just before `reconciled`.
    case validated(records: Int)
    /// The records were reconciled and committed (or, dry-run, computed).
    case reconciled(records: Int)
    /// Images done of those to download.
    case images(done: Int, total: Int)
}

extension SyncOptions {
    /// Whether `error` is a sync's file going past `maximumBytes`: a local page, an HTTP body,
    /// or a file a manifest names; for a caller that says how to raise the limit.
    package static func isSizeLimit(_ error: any Error) -> Bool {
        switch error {
        case FeedSourceError.tooLarge: true
        case HTTPError.tooLarge: true
        case let error as ManifestError: error.message.hasSuffix(" bytes per file")
        default: false
        }
    }
}
