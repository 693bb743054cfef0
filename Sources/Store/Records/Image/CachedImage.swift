import Foundation

/// Image bytes cached for a URL.
public struct CachedImage: Sendable, Codable, Equatable, Hashable {
    public var url: String
    public var data: Data
    public var contentType: String?
    /// When the bytes were stored.
    public var storedAt: Date
    /// When they were last read; eviction removes the least recently used first.
    public var lastAccessAt: Date

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
    public var url: String
    public var contentType: String?
    public var size: Int
    public var storedAt: Date
    public var lastAccessAt: Date
}

/// The cache's totals.
public struct ImageCacheStats: Sendable, Codable, Equatable {
    public var count: Int
    public var totalBytes: Int
    public var budgetBytes: Int
}
