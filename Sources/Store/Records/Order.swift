import Foundation

/// A shopping order with its items.
public struct Order: Sendable, Codable, Equatable, Hashable, Identifiable {
    public var id: String
    /// When it was placed; the store keeps millisecond precision.
    public var placedAt: Date
    /// At least one item, in order.
    public var items: [OrderItem]

    public init(id: String, placedAt: Date, items: [OrderItem]) {
        self.id = id
        self.placedAt = placedAt
        self.items = items
    }

    /// The exact sum of every item's price times its quantity.
    public var total: Money { items.reduce(.zero) { $0 + $1.subtotal } }
}

/// One line of an order.
public struct OrderItem: Sendable, Codable, Equatable, Hashable {
    public var itemName: String
    public var price: Money
    public var aisle: Int
    public var quantity: Int

    public init(itemName: String, price: Money, aisle: Int, quantity: Int = 1) {
        self.itemName = itemName
        self.price = price
        self.aisle = aisle
        self.quantity = quantity
    }

    public var subtotal: Money { price * quantity }

    private enum CodingKeys: String, CodingKey { case itemName, price, aisle, quantity }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        itemName = try container.decode(String.self, forKey: .itemName)
        price = try container.decode(Money.self, forKey: .price)
        aisle = try container.decode(Int.self, forKey: .aisle)
        quantity = try container.decodeIfPresent(Int.self, forKey: .quantity) ?? 1
    }
}
