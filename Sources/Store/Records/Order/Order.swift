import Foundation

/// A shopping order with its items.
public struct Order: Sendable, Codable, Equatable, Hashable, Identifiable {
    public var id: String
    /// When it was placed; the store keeps millisecond precision.
    public var placedAt: Date
    /// At least one item and at most `maximumItems`, in order.
    public var items: [OrderItem]

    /// The most items an order may hold. A write of more is refused, and so is a feed's order
    /// of more: at 5 JSON values an item, any order the store holds stays well within what one
    /// feed record may hold (`JSONParser.defaultMaximumValues`, a million), so every order it
    /// exports or publishes is one its clients read.
    public static let maximumItems = 100_000

    /// An order with its items.
    public init(id: String, placedAt: Date, items: [OrderItem]) {
        self.id = id
        self.placedAt = placedAt
        self.items = items
    }

    /// The exact sum of every item's price times its quantity, in checked arithmetic: a price,
    /// subtotal or total beyond `Money.maximum` (or a quantity beyond
    /// `OrderItem.maximumQuantity`) throws `StoreError.invalidRecord` naming the item, never traps.
    public var total: Money {
        get throws {
            var sum = Money.zero
            for (index, item) in items.enumerated() {
                if let reason = item.amountProblem {
                    throw StoreError.invalidRecord(kind: .order, key: id, field: "items[\(index)]", reason: reason)
                }
                // Both fit: the subtotal is at most 10^18 cents, the sum at most 10^12 + 10^18.
                guard let subtotal = item.price.multiplied(by: item.quantity), let next = sum.adding(subtotal),
                    next <= Money.maximum
                else {
                    throw StoreError.invalidRecord(
                        kind: .order, key: id, field: "total",
                        reason: "the total is more than the maximum amount \(Money.maximum)")
                }
                sum = next
            }
            return sum
        }
    }
}

/// One line of an order.
public struct OrderItem: Sendable, Codable, Equatable, Hashable {
    /// What was bought.
    public var itemName: String
    /// The price of one.
    public var price: Money
    /// Where it is found: an aisle number, 0 or more.
    public var aisle: Int
    /// How many, at least 1.
    public var quantity: Int

    /// An item; one of it unless `quantity` says more.
    public init(itemName: String, price: Money, aisle: Int, quantity: Int = 1) {
        self.itemName = itemName
        self.price = price
        self.aisle = aisle
        self.quantity = quantity
    }

    /// The most of one item an order may hold.
    public static let maximumQuantity = 1_000_000

    /// The price times the quantity, in checked arithmetic; throws `StoreError.invalidRecord` if
    /// the price, the quantity or their product is beyond the bounds (`Money.maximum`,
    /// `maximumQuantity`). An item does not know its order: the error's key is empty and its
    /// field names the item (`order: item 'Milk': quantity 0 is less than 1`); `Order.total`
    /// names the order and the item's index.
    public var subtotal: Money {
        get throws {
            if let reason = amountProblem {
                throw StoreError.invalidRecord(kind: .order, key: "", field: "item '\(itemName)'", reason: reason)
            }
            return Money(minorUnits: price.minorUnits * Int64(quantity)) // both bounded: at most 10^18
        }
    }

    /// Why this item's price, quantity or subtotal is out of bounds, or nil.
    public var amountProblem: String? {
        if price.minorUnits < 0 { return "price \(price) is negative" }
        if price > Money.maximum { return "price \(price) is more than the maximum amount \(Money.maximum)" }
        if quantity < 1 { return "quantity \(quantity) is less than 1" }
        if quantity > Self.maximumQuantity { return "quantity \(quantity) is more than the maximum \(Self.maximumQuantity)" }
        if price.minorUnits * Int64(quantity) > Money.maximum.minorUnits {
            return "subtotal \(price) x \(quantity) is more than the maximum amount \(Money.maximum)"
        }
        return nil
    }

    private enum CodingKeys: String, CodingKey { case itemName, price, aisle, quantity }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        itemName = try container.decode(String.self, forKey: .itemName)
        price = try container.decode(Money.self, forKey: .price)
        aisle = try container.decode(Int.self, forKey: .aisle)
        quantity = try container.decodeIfPresent(Int.self, forKey: .quantity) ?? 1
    }
}
