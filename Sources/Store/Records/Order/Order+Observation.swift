// Observing orders (see `Store.observe(_:)` for the protocol). An order changes when its items do.

extension ValueObservation where Value == [Order] {
    /// Every order with its items, by id.
    public static var allOrders: Self { Self(kinds: [.order]) { try $0.orders.fetchAll() } }
}

extension ValueObservation where Value == Order? {
    /// One order with its items; nil while there is none with that id.
    public static func order(id: String) -> Self {
        Self(isAffected: { $0.kind == .order && $0.key == id }) { try $0.orders.find(id) }
    }
}
