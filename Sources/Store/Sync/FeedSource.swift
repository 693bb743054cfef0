import Foundation

/// Where a feed comes from: a local file or an http(s) URL.
public enum FeedSource: Sendable, Hashable, CustomStringConvertible {
    case file(URL)
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
        self = .file(URL(fileURLWithPath: text).standardizedFileURL)
    }

    /// The first page's URL.
    public var url: URL {
        switch self {
        case .file(let url), .remote(let url): url
        }
    }

    /// The key sync state is kept under: the absolute path or the URL without credentials.
    public var key: String {
        switch self {
        case .file(let url): url.path
        case .remote(let url): url.redacted
        }
    }

    public var description: String { key }
}

public enum FeedSourceError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalid(String, reason: String)
    case unreadable(path: String, reason: String)
    case tooLarge(source: String, limit: Int)

    public var description: String {
        switch self {
        case .invalid(let text, let reason): "\(text): not a feed source: \(reason)"
        case .unreadable(let path, let reason): "\(path): cannot read: \(reason)"
        case .tooLarge(let source, let limit): "\(source): larger than the limit of \(limit) bytes (see --max-bytes)"
        }
    }
}
