// Observing the image cache (see `Store.observe(_:)` for the protocol).

extension ValueObservation where Value == [CachedImageInfo] {
    /// Every cached image without its bytes, by url.
    public static var allImages: Self {
        Self(kinds: [.image]) { try $0.images(budget: .max, now: .distantPast).fetchAllInfo() }
    }
}
