import Foundation

/// The two cache operations the image pipeline needs, handed to it by the store so the pipeline
/// never holds the store itself (no `Store -> ImagePipeline -> Store` cycle).
struct ImageCacheAccess: Sendable {
    /// Whether the cache holds an entry for `url` (a read).
    var contains: @Sendable (_ url: String) async throws -> Bool
    /// Stores the bytes for `url` in one write transaction unless an entry for it exists by then;
    /// true if they were stored.
    var insertIfAbsent: @Sendable (_ url: String, _ data: Data, _ contentType: String?) async throws -> Bool
    /// The cache's byte budget: no download may be larger (it could never be stored).
    var budget: Int
}
