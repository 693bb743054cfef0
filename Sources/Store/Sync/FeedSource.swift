import Foundation

/// Where a feed comes from: a local file or an http(s) URL.
public enum FeedSource: Sendable, Hashable, CustomStringConvertible {
    /// A feed on this machine: a `file:` URL, standardized (`..` and `.` resolved). Its pages
    /// (`next`) are other files, relative to it.
    case file(URL)
    /// A feed served over HTTP or HTTPS, read with conditional requests (ETag, Last-Modified)
    /// so an unchanged feed costs one round trip.
    case remote(URL)

    /// `https://...` or `http://...` is remote; `file:///...` or any other text is a file path.
    /// Other schemes are refused.
    public init(_ text: String) throws {
        if let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme.count > 1 {
            switch scheme {
            case "http", "https":
                guard url.host != nil else { throw FeedSourceError.invalid(text, reason: "the URL has no host") }
                self = .remote(url)
            case "file": self = .file(url.standardizedFileURL)
            default: throw FeedSourceError.invalid(text, reason: "only http, https and file paths are supported")
            }
            return
        }
        // Relative to the working folder, made absolute here: Foundation would expand a leading
        // `~` (from the password database, not $HOME), where every other path takes it as it is
        // (a shell has expanded any `~` the user meant).
        let path = text.hasPrefix("/") ? text : FileManager.default.currentDirectoryPath + "/" + text
        self = .file(URL(fileURLWithPath: path).standardizedFileURL)
    }

    /// The first page's URL.
    public var url: URL {
        switch self {
        case .file(let url), .remote(let url): url
        }
    }

    /// The key sync state is kept under: the absolute path, or the URL without credentials: no
    /// user name or password, and none of the query parameters that sign an object store's URL
    /// (S3's `X-Amz-Signature`, `X-Amz-Date`, ..., GCS's `X-Goog-...`, Azure's SAS `sig`, `se`,
    /// ..., CloudFront's `Signature`, `Policy`, ...; every other parameter is kept, in order).
    /// Each new signing of a presigned URL is then the same source, synced incrementally, and
    /// the signature is never stored or shown. The description is the key too.
    public var key: String {
        switch self {
        case .file(let url): url.path
        case .remote(let url): url.redacted
        }
    }

    public var description: String { key }
}

/// A feed source that is not one, or that could not be read; the store is unchanged. The
/// description names the source and the reason.
public enum FeedSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not a source `FeedSource.init(_:)` accepts (another scheme, an http URL
    /// without host): the text and why.
    case invalid(String, reason: String)
    /// A local file (or a temporary file a download is spooled to) cannot be read or written:
    /// its path and the system's reason.
    case unreadable(path: String, reason: String)
    /// A local page or image file is larger than `SyncOptions.maximumBytes`: its path and the
    /// limit in bytes (over HTTP, the same limit is `HTTPError.tooLarge`).
    case tooLarge(source: String, limit: Int)

    public var description: String {
        switch self {
        case .invalid(let text, let reason): "\(text): not a feed source: \(reason)"
        case .unreadable(let path, let reason): "\(path): cannot read: \(reason)"
        case .tooLarge(let source, let limit):
            "\(source): larger than the limit of \(limit) byte\(limit == 1 ? "" : "s") per file"
        }
    }
}
