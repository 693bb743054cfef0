import Foundation

// Orders as a kind: how the generic layers read, sync, export and observe them. An order is
// stored in two tables (`orders`, `order_items`); both are observed as the order's.

/// The order kind's handler (see `TableBackedKind`).
struct OrderKind: TableBackedKind {
    var kind: RecordKind { .order }
    var observedTables: [ObservedKindTable] {
        [
            ObservedKindTable(.order, ObservedTable(table: "orders", keyColumn: "id")),
            ObservedKindTable(.order, ObservedTable(table: "order_items", keyColumn: "order_id"), holdsRecords: false),
        ]
    }

    func decode(_ fields: inout FeedFields) -> Order? { Order.decode(&fields) }
    func table(_ db: Database) -> OrderTable { db.orders }
    func feedValue(of record: Order) -> JSONValue { record.jsonValue() }
}

extension Order {
    /// Reads an order from its feed object (the id already read and checked): `placedAt` an
    /// RFC 3339 timestamp, `items` at least one valid item, the total within bounds.
    static func decode(_ fields: inout FeedFields) -> Order? {
        var placedAt: Date?
        if let text = fields.string("placedAt") {
            placedAt = Timestamp.parse(text)
            if placedAt == nil {
                fields.problem("placedAt", "\(FeedFields.quote(text)) \(Timestamp.problem(with: text))")
            }
        }
        var items: [OrderItem]?
        switch fields.member("items") {
        case nil: fields.problem("items", "is required (at least one item)")
        case .array(let elements)? where elements.count > maximumItems:
            fields.problem("items", "holds \(elements.count) items, more than an order may hold (\(maximumItems))")
        case .array(let elements)?:
            if elements.isEmpty { fields.problem("items", "must hold at least one item") }
            var parsed: [OrderItem] = []
            parsed.reserveCapacity(elements.count)
            var valid = true
            for (index, element) in elements.enumerated() {
                guard case .object(let members) = element else {
                    fields.problem("items[\(index)]", "expected an object, found \(element.typeDescription)")
                    valid = false
                    continue
                }
                var itemFields = fields.nested(members, in: "items", at: index)
                if let item = OrderItem.decode(&itemFields), itemFields.problemCount == 0 {
                    parsed.append(item)
                } else {
                    valid = false
                }
                fields.absorb(itemFields)
            }
            if valid && !elements.isEmpty { items = parsed }
            if let parsed = items, (try? Order(id: "", placedAt: Date(), items: parsed).total) == nil {
                fields.problem("items", "the order's total is more than the maximum amount \(Money.maximum)")
                items = nil
            }
        case let other?: fields.problem("items", "expected an array, found \(other.typeDescription)")
        }
        guard let placedAt, let items else { return nil }
        return Order(id: fields.key, placedAt: placedAt, items: items)
    }

    /// The feed's order shape; with `includingTotal`, also `total` (the exact sum; left out if
    /// it is out of bounds, which an order read from a store never is).
    public func jsonValue(includingTotal: Bool = false) -> JSONValue {
        var members = [
            JSONMember("id", .string(id)),
            JSONMember("placedAt", .string(Timestamp.format(placedAt))),
            JSONMember("items", .array(items.map(\.jsonValue))),
        ]
        if includingTotal, let total = try? total { members.append(JSONMember("total", .number(total.description))) }
        return .object(members)
    }
}

extension OrderItem {
    /// Reads an item of an order's feed object.
    static func decode(_ fields: inout FeedFields) -> OrderItem? {
        let name = fields.string("itemName")
        var price: Money?
        switch fields.member("price") {
        case nil: fields.problem("price", "is required")
        case .number(let text)?:
            switch Money.parseAmount(text) {
            case .cents(let cents) where cents <= Money.maximum.minorUnits: price = Money(minorUnits: cents)
            case .cents, .tooLarge:
                fields.problem("price", "\(text.prefix(40)) is too large: at most \(Money.maximum)")
            case .invalid:
                // Clipped as every number a problem names is: the whole text could be megabytes,
                // and the message goes to stderr and into the sync history.
                fields.problem("price", "\(text.prefix(40)) is not an amount of money: at least 0, at most 2 fraction digits")
            }
        case let other?: fields.problem("price", "expected a number, found \(FeedFields.describe(other))")
        }
        let aisle = fields.integer("aisle", minimum: 0, required: true)
        // null means absent: one of the item.
        let hasQuantity = fields.hasValue("quantity")
        let quantity = fields.integer("quantity", minimum: 1, maximum: OrderItem.maximumQuantity, required: false)
        guard let name, let price, let aisle else { return nil }
        if hasQuantity && quantity == nil { return nil }
        let item = OrderItem(itemName: name, price: price, aisle: aisle, quantity: quantity ?? 1)
        if let reason = item.amountProblem {
            fields.problem("", reason)
            return nil
        }
        return item
    }

    /// The item in the feed's shape (<doc:FeedFormat>): its price as an exact decimal number.
    public var jsonValue: JSONValue {
        .object([
            "itemName": .string(itemName), "price": .number(price.description),
            "aisle": .integer(aisle), "quantity": .integer(quantity),
        ])
    }
}

extension Feed {
    /// The feed's orders, in document order.
    public var orders: [Order] { records(of: Order.self) }
}
