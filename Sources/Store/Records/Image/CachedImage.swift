import Foundation

/// Image bytes cached for a URL.
public struct CachedImage: Sendable, Codable, Equatable, Hashable {
    /// The cache key: the image's url.
    public var url: String
    /// The bytes.
    public var data: Data
    /// The bytes' content type, if known.
    public var contentType: String?
    /// When the bytes were stored.
    public var storedAt: Date
    /// When they were last read; eviction removes the least recently used first.
    public var lastAccessAt: Date

    /// An entry with its bytes and times.
    public init(url: String, data: Data, contentType: String? = nil, storedAt: Date, lastAccessAt: Date) {
        self.url = url
        self.data = data
        self.contentType = contentType
        self.storedAt = storedAt
        self.lastAccessAt = lastAccessAt
    }

    /// The number of bytes.
    public var size: Int { data.count }

    /// The same entry without its bytes.
    public var info: CachedImageInfo {
        CachedImageInfo(url: url, contentType: contentType, size: size, storedAt: storedAt, lastAccessAt: lastAccessAt)
    }
}

/// What the cache knows of an entry, without its bytes (for listings).
public struct CachedImageInfo: Sendable, Codable, Equatable, Hashable {
    /// The cache key: the image's url.
    public var url: String
    /// The bytes' content type, if known.
    public var contentType: String?
    /// The number of bytes.
    public var size: Int
    /// When the bytes were stored.
    public var storedAt: Date
    /// When they were last read.
    public var lastAccessAt: Date
}

/// The cache's totals.
public struct ImageCacheStats: Sendable, Codable, Equatable {
    /// The number of entries.
    public var count: Int
    /// Their bytes, in total.
    public var totalBytes: Int
    /// The most the cache keeps.
    public var budgetBytes: Int
}
