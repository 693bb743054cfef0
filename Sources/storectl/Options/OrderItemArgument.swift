import ArgumentParser
import Foundation
import Store

/// One `--item NAME:PRICE:AISLE[:QTY]`, parsed once, when the command line is read. What is
/// wrong with it, if anything, is kept rather than thrown: the command's `validate()` reports it
/// with the item's position (`--item #2 'A:abc:1': price ...`), which ArgumentParser does not
/// know.
struct OrderItemArgument: ExpressibleByArgument, Sendable {
    /// The text as given.
    let text: String
    /// The item, or what is wrong with the text.
    let parsed: Result<OrderItem, Problem>

    struct Problem: Error, Sendable, CustomStringConvertible {
        let description: String
    }

    init(argument: String) {
        text = argument
        parsed = Result { () throws(Problem) -> OrderItem in try Self.parse(argument) }
    }

    /// The items of `arguments`, in order; a usage error naming the first bad one and its position.
    static func items(_ arguments: [OrderItemArgument]) throws -> [OrderItem] {
        try arguments.enumerated().map { index, argument in
            switch argument.parsed {
            case .success(let item): item
            case .failure(let problem): throw ValidationError("--item #\(index + 1) '\(argument.text)': \(problem)")
            }
        }
    }

    /// A usage error if the items' total does not fit the largest amount.
    static func checkTotal(of items: [OrderItem]) throws {
        if (try? Order(id: "", placedAt: Date(), items: items).total) == nil {
            throw ValidationError(
                "the order's total is more than the maximum amount \(Money.maximum) (--item #1 to #\(items.count))")
        }
    }

    /// NAME:PRICE:AISLE[:QTY]; the name may itself contain colons (fields are taken from the right).
    private static func parse(_ text: String) throws(Problem) -> OrderItem {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        // Digits only, whether or not they fit: 99999999999999999999 is a quantity, only too large.
        func isInteger(_ s: String) -> Bool { (s.hasPrefix("-") ? s.dropFirst() : s[...]).isPlainDigits }
        let hasQuantity = parts.count >= 4 && isInteger(parts[parts.count - 1]) && isInteger(parts[parts.count - 2])
        let fieldCount = hasQuantity ? 3 : 2
        guard parts.count > fieldCount else { throw Problem(description: "expected NAME:PRICE:AISLE[:QTY]") }
        let fields = Array(parts.suffix(fieldCount))
        let name = parts.dropLast(fieldCount).joined(separator: ":")
        guard !name.isEmpty else { throw Problem(description: "the item name is empty") }
        let price: Money
        switch Money.parseAmount(fields[0]) {
        case .cents(let cents) where cents <= Money.maximum.minorUnits: price = Money(minorUnits: cents)
        case .cents, .tooLarge:
            throw Problem(description: "price '\(fields[0])' is too large: at most \(Money.maximum)")
        case .invalid:
            throw Problem(description: "price '\(fields[0])' is not an amount of at least 0 with at most two decimals")
        }
        // Digits that do not fit in Int are too large, not "not an integer".
        func tooLarge(_ s: String, maximum: Int) -> Bool {
            isInteger(s) && !s.hasPrefix("-") && (Int(s).map { $0 > maximum } ?? true)
        }
        // Int("+5") is 5: only digits (and a sign to be refused) count, as for the quantity.
        guard isInteger(fields[1]), let aisle = Int(fields[1]), aisle >= 0 else {
            // NAME:PRICE:AISLE:QTY with a quantity that is no integer (`1.0`, `+5`, `1e6`) read as
            // a name with a colon, a price and a bad aisle: blame the quantity when the fields
            // before it make a price and an aisle.
            if parts.count >= 4, isInteger(parts[parts.count - 2]), !parts[parts.count - 2].hasPrefix("-"),
                case .cents = Money.parseAmount(parts[parts.count - 3])
            {
                throw Problem(description: "quantity '\(fields[1])' is not an integer of at least 1")
            }
            if tooLarge(fields[1], maximum: Int.max) {
                throw Problem(description: "aisle '\(fields[1])' is too large: at most \(Int.max)")
            }
            throw Problem(description: "aisle '\(fields[1])' is not an integer of at least 0")
        }
        var quantity = 1
        if hasQuantity {
            guard isInteger(fields[2]), let value = Int(fields[2]), value >= 1, value <= OrderItem.maximumQuantity else {
                if tooLarge(fields[2], maximum: OrderItem.maximumQuantity) {
                    throw Problem(description: "quantity '\(fields[2])' is too large: at most \(OrderItem.maximumQuantity)")
                }
                throw Problem(description: "quantity '\(fields[2])' is not an integer of at least 1")
            }
            quantity = value
        }
        let item = OrderItem(itemName: name, price: price, aisle: aisle, quantity: quantity)
        if let problem = item.amountProblem { throw Problem(description: "\(problem)") }
        return item
    }
}
