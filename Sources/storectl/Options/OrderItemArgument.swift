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

    /// The form of an item, as its errors show it.
    static let form = #"NAME:PRICE:AISLE[:QTY] (a colon in NAME written \:, a backslash \\)"#

    /// The fields of `text`, split at each `:` not escaped: `\:` stands for a colon and `\\`
    /// for a backslash, in any field (only a name has a use for them).
    static func fields(of text: String) throws(Problem) -> [String] {
        // By Unicode scalar, not Character: a colon followed by a combining mark is still a colon.
        var fields = [String.UnicodeScalarView()]
        var escaped = false
        for scalar in text.unicodeScalars {
            if escaped {
                guard scalar == ":" || scalar == "\\" else {
                    throw Problem(description: #"a backslash must be followed by : or \ (\: is a colon, \\ a backslash)"#)
                }
                fields[fields.count - 1].append(scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else if scalar == ":" {
                fields.append(String.UnicodeScalarView())
            } else {
                fields[fields.count - 1].append(scalar)
            }
        }
        if escaped { throw Problem(description: #"a backslash ends it (\: is a colon, \\ a backslash)"#) }
        return fields.map(String.init)
    }

    /// NAME:PRICE:AISLE[:QTY], three or four fields split at unescaped colons: nothing is
    /// guessed (`Bolt M8:20:5.00:2` was the item `Bolt M8:20`, price 5.00, aisle 2; it is now
    /// refused for its aisle `5.00`).
    private static func parse(_ text: String) throws(Problem) -> OrderItem {
        let fields = try Self.fields(of: text)
        guard fields.count == 3 || fields.count == 4 else {
            throw Problem(description: "expected \(form), found \(fields.count) field\(fields.count == 1 ? "" : "s")")
        }
        // Digits only, whether or not they fit: 99999999999999999999 is a quantity, only too large.
        func isInteger(_ s: String) -> Bool { (s.hasPrefix("-") ? s.dropFirst() : s[...]).isPlainDigits }
        let name = fields[0]
        guard !name.isEmpty else { throw Problem(description: "the item name is empty") }
        let price: Money
        switch Money.parseAmount(fields[1]) {
        case .cents(let cents) where cents <= Money.maximum.minorUnits: price = Money(minorUnits: cents)
        case .cents, .tooLarge:
            throw Problem(description: "price '\(fields[1])' is too large: at most \(Money.maximum)")
        case .invalid:
            throw Problem(description: "price '\(fields[1])' is not an amount of at least 0 with at most two decimals")
        }
        // Digits that do not fit in Int are too large, not "not an integer".
        func tooLarge(_ s: String, maximum: Int) -> Bool {
            isInteger(s) && !s.hasPrefix("-") && (Int(s).map { $0 > maximum } ?? true)
        }
        // Int("+5") is 5: only digits (and a sign to be refused) count, as for the quantity.
        guard isInteger(fields[2]), let aisle = Int(fields[2]), aisle >= 0 else {
            if tooLarge(fields[2], maximum: Int.max) {
                throw Problem(description: "aisle '\(fields[2])' is too large: at most \(Int.max)")
            }
            throw Problem(description: "aisle '\(fields[2])' is not an integer of at least 0")
        }
        var quantity = 1
        if fields.count == 4 {
            guard isInteger(fields[3]), let value = Int(fields[3]), value >= 1, value <= OrderItem.maximumQuantity else {
                if tooLarge(fields[3], maximum: OrderItem.maximumQuantity) {
                    throw Problem(description: "quantity '\(fields[3])' is too large: at most \(OrderItem.maximumQuantity)")
                }
                throw Problem(description: "quantity '\(fields[3])' is not an integer of at least 1")
            }
            quantity = value
        }
        let item = OrderItem(itemName: name, price: price, aisle: aisle, quantity: quantity)
        if let problem = item.amountProblem { throw Problem(description: "\(problem)") }
        return item
    }
}
