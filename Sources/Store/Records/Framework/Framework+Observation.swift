// Observing frameworks (see `Store.observe(_:)` for the protocol).

extension ValueObservation where Value == [Framework] {
    /// Every framework, by id.
    public static var allFrameworks: Self { Self(kinds: [.framework]) { try $0.frameworks.fetchAll() } }
}

extension ValueObservation where Value == Framework? {
    /// One framework; nil while there is none with that id.
    public static func framework(id: String) -> Self {
        Self(isAffected: { $0.kind == .framework && $0.key == id }) { try $0.frameworks.find(id) }
    }
}

extension FrameworkStore {
    /// Observes every framework (see `Store.observe(_:)` for the protocol).
    public func observeAll() -> AsyncThrowingStream<[Framework], any Error> { store.observe(.allFrameworks) }

    /// Observes one framework by id; nil while there is none.
    public func observe(id: String) -> AsyncThrowingStream<Framework?, any Error> { store.observe(.framework(id: id)) }
}
