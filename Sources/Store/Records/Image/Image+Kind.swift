import Foundation

// Images as a kind: keyed by url (resolved against the page), synced by the cache's own rules
// (bytes without inline data are downloaded after the sync's transaction).

/// An image entry of a feed.
public struct FeedImage: Sendable, Equatable {
    /// The cache key: the feed's url, resolved against the page's own URL when relative.
    public var url: String
    /// Inline bytes; when nil, the bytes are downloaded from `url` if not already cached.
    public var data: Data?
    /// The bytes' content type, if the feed names one.
    public var contentType: String?
    /// Where the bytes are downloaded from: `url` resolved against the page it came from.
    var location: URL?
    /// For an image of a local feed: the feed's folder, the only place `location` may be read from.
    var folder: URL?

    /// An image entry; `location` is `url`.
    public init(url: String, data: Data? = nil, contentType: String? = nil) {
        self.url = url
        self.data = data
        self.contentType = contentType
        self.location = URL(string: url)
    }
}

/// The image kind's handler (see `RecordKindHandler`).
struct ImageKind: RecordKindHandler {
    var kind: RecordKind { .image }
    var observedTables: [ObservedKindTable] { [ObservedKindTable(.image, ObservedTable(table: "images", keyColumn: "url"))] }

    func readKey(_ fields: inout FeedFields) -> String? {
        guard let text = fields.string("url") else { return nil }
        guard let url = Self.resolve(text, &fields, field: "url") else { return nil }
        if let local = Self.localFile(text, fields), let location = local.location, let folder = local.folder,
            let reason = LocalImagePath.refusal(text, location: location, folder: folder)
        {
            fields.problem("url", "\(FeedFields.quote(text)) \(reason); refused")
            return nil
        }
        return url
    }

    func tombstoneKey(_ text: String, _ fields: inout FeedFields) -> String? { Self.resolve(text, &fields, field: "") }

    func decode(_ fields: inout FeedFields) -> FeedImage? {
        var data: Data?
        switch fields.member("data") {
        case nil, .null?: break
        case .string(let base64)?:
            switch StrictBase64.decode(base64) {
            case .success(let bytes): data = bytes
            case .failure(let refusal):
                var url = fields.key
                if url.isEmpty, case .string(let text)? = fields.member("url") { url = text }
                fields.problem("data", "\(refusal) (the image \(FeedFields.quote(url)))")
            }
        case let other?: fields.problem("data", "expected a base64 string, found \(other.typeDescription)")
        }
        let contentType = fields.optionalString("contentType")
        guard case .string(let text)? = fields.member("url") else { return nil }
        var image = FeedImage(url: fields.key, data: data, contentType: contentType.value)
        image.location = URL(string: text, relativeTo: fields.pageURL)?.absoluteURL
        image.folder = Self.localFile(text, fields)?.folder
        return image
    }

    /// An image's hash is computed as it is applied, and only when it has data: `hash` is nil.
    func reconcile(_ record: FeedImage, hash: UInt64?, with reconciler: inout Reconciler) throws {
        try reconciler.reconcileImage(record)
    }
    func tombstone(_ key: String, with reconciler: inout Reconciler) throws { try reconciler.tombstoneImage(key) }

    func forEachFeedValue(_ db: Database, includingData: Bool, _ body: (JSONValue) throws -> Void) throws {
        try db.images(budget: 0, now: Date()).forEachRecord { try body($0.jsonValue(includingData: includingData)) }
    }
    func feedValue(of key: String, in db: Database) throws -> JSONValue? {
        try db.images(budget: .max, now: Date()).peek(key)?.jsonValue(includingData: true)
    }
    func feedValue(of record: FeedImage) -> JSONValue {
        var members = [JSONMember("url", .string(record.url))]
        if let contentType = record.contentType { members.append(JSONMember("contentType", .string(contentType))) }
        if let data = record.data { members.append(JSONMember("data", .string(data.base64EncodedString()))) }
        return .object(members)
    }

    /// For a url of a local feed naming a file: where it lies and the feed's folder.
    private static func localFile(_ text: String, _ fields: FeedFields) -> (location: URL?, folder: URL?)? {
        let pageURL = fields.pageURL
        guard pageURL.isFileURL, let resolved = URL(string: text, relativeTo: pageURL)?.absoluteURL, resolved.isFileURL
        else { return nil }
        return (resolved, fields.localFolder ?? pageURL.deletingLastPathComponent())
    }

    /// An image url: absolute http(s), or relative to the page. Never another scheme, and a
    /// remote page can never name a `file:` URL. Problems are reported at `field`.
    private static func resolve(_ text: String, _ fields: inout FeedFields, field: String) -> String? {
        let pageURL = fields.pageURL
        guard !text.isEmpty, let url = URL(string: text, relativeTo: pageURL)?.absoluteURL, let scheme = url.scheme?.lowercased()
        else {
            fields.problem(field, "\(FeedFields.quote(text)) is not a URL")
            return nil
        }
        let pageIsFile = pageURL.isFileURL
        let isRelative = URL(string: text)?.scheme == nil
        switch scheme {
        case "http", "https": break
        case "file" where pageIsFile && isRelative: break
        default:
            fields.problem(field, "\(FeedFields.quote(text)) must be an http(s) URL or relative to the feed")
            return nil
        }
        // Relative urls of a local feed stay as written: the key must not depend on where the file lies.
        return pageIsFile && isRelative ? text : url.absoluteString
    }
}

extension CachedImage {
    /// The feed's image shape; with `includingData`, the bytes as base64 `data`.
    public func jsonValue(includingData: Bool) -> JSONValue {
        var members = [JSONMember("url", .string(url))]
        if let contentType { members.append(JSONMember("contentType", .string(contentType))) }
        if includingData { members.append(JSONMember("data", .string(data.base64EncodedString()))) }
        return .object(members)
    }
}

extension Feed {
    /// The feed's images, in document order.
    public var images: [FeedImage] { records(of: FeedImage.self) }
}
