import ArgumentParser
import Foundation
import Store

struct OrdersAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add an order; its id must be new.",
        discussion: """
            Each --item is NAME:PRICE:AISLE[:QTY], e.g. --item Milk:2.49:3:2. PRICE is exact, at most two decimals; \
            prices, subtotals (PRICE x QTY) and the order's total are at most 10000000000.00, QTY 1 to 1000000.
            """
    )

    @OptionGroup var store: StoreOptions
    @Option(help: "A new id (1 to 200 characters).") var id: String
    @Option(name: .customLong("placed-at"), help: "When it was placed, RFC 3339 (default: now).") var placedAt: String?
    @Option(name: .customLong("item"), help: ArgumentHelp("An item: NAME:PRICE:AISLE[:QTY]; repeat for more.", valueName: "item"))
    var items: [String] = []

    func validate() throws {
        if let problem = RecordKind.idProblem(id) { throw ValidationError("--id: \(problem)") }
        if items.isEmpty { throw ValidationError("an order needs at least one --item NAME:PRICE:AISLE[:QTY]") }
        let parsed = try items.enumerated().map { try Self.parseItem($1, index: $0) }
        try Self.checkTotal(of: parsed)
        if let placedAt, Timestamp.parse(placedAt) == nil {
            throw ValidationError("--placed-at: '\(placedAt)' is not an RFC 3339 timestamp such as 2026-11-20T09:30:00Z")
        }
    }

    func run() async throws {
        let parsed = try items.enumerated().map { try Self.parseItem($1, index: $0) }
        let order = Order(id: id, placedAt: placedAt.flatMap(Timestamp.parse) ?? Date(), items: parsed)
        let opened = try await store.open()
        try await withStoreErrors(store.resolvedPath) { try await opened.orders.insert(order) }
        Output.print("added order \(id), total \(try order.total)")
    }

    /// A usage error if the items' total does not fit the largest amount.
    static func checkTotal(of items: [OrderItem]) throws {
        if (try? Order(id: "", placedAt: Date(), items: items).total) == nil {
            throw ValidationError("the order's total is more than the maximum amount \(Money.maximum) (--item #1 to #\(items.count))")
        }
    }

    /// NAME:PRICE:AISLE[:QTY]; the name may itself contain colons (fields are taken from the right).
    static func parseItem(_ text: String, index: Int) throws -> OrderItem {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        let where_ = "--item #\(index + 1) '\(text)'"
        // Digits only, whether or not they fit: 99999999999999999999 is a quantity, only too large.
        func isInteger(_ s: String) -> Bool {
            let digits = s.utf8.first == UInt8(ascii: "-") ? s.utf8.dropFirst() : s.utf8[...]
            return !digits.isEmpty && digits.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        }
        let hasQuantity = parts.count >= 4 && isInteger(parts[parts.count - 1]) && isInteger(parts[parts.count - 2])
        let fieldCount = hasQuantity ? 3 : 2
        guard parts.count > fieldCount else { throw ValidationError("\(where_): expected NAME:PRICE:AISLE[:QTY]") }
        let fields = Array(parts.suffix(fieldCount))
        let name = parts.dropLast(fieldCount).joined(separator: ":")
        guard !name.isEmpty else { throw ValidationError("\(where_): the item name is empty") }
        let price: Money
        switch Money.parseAmount(fields[0]) {
        case .cents(let cents) where cents <= Money.maximum.minorUnits: price = Money(minorUnits: cents)
        case .cents, .tooLarge:
            throw ValidationError("\(where_): price '\(fields[0])' is too large: at most \(Money.maximum)")
        case .invalid:
            throw ValidationError("\(where_): price '\(fields[0])' is not an amount of at least 0 with at most two decimals")
        }
        // Digits that do not fit in Int are too large, not "not an integer".
        func tooLarge(_ s: String, maximum: Int) -> Bool {
            isInteger(s) && !s.hasPrefix("-") && (Int(s).map { $0 > maximum } ?? true)
        }
        guard let aisle = Int(fields[1]), aisle >= 0 else {
            if tooLarge(fields[1], maximum: Int.max) {
                throw ValidationError("\(where_): aisle '\(fields[1])' is too large: at most \(Int.max)")
            }
            throw ValidationError("\(where_): aisle '\(fields[1])' is not an integer of at least 0")
        }
        var quantity = 1
        if hasQuantity {
            guard let value = Int(fields[2]), value >= 1, value <= OrderItem.maximumQuantity else {
                if tooLarge(fields[2], maximum: OrderItem.maximumQuantity) {
                    throw ValidationError("\(where_): quantity '\(fields[2])' is too large: at most \(OrderItem.maximumQuantity)")
                }
                throw ValidationError("\(where_): quantity '\(fields[2])' is not an integer of at least 1")
            }
            quantity = value
        }
        let item = OrderItem(itemName: name, price: price, aisle: aisle, quantity: quantity)
        if let problem = item.amountProblem { throw ValidationError("\(where_): \(problem)") }
        return item
    }
}
