import Foundation

/// An exact amount of money in minor units (cents): never binary floating point, so items priced
/// 0.1 and 0.2 total exactly 0.30.
public struct Money: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The amount in cents.
    public var minorUnits: Int64

    /// The amount of `minorUnits` cents, as given: any Int64, negative included (the store's own
    /// inputs are checked against `0...maximum` where they are read, not here).
    public init(minorUnits: Int64) { self.minorUnits = minorUnits }

    /// No money: 0.00, the total of an order with no items.
    public static let zero = Money(minorUnits: 0)

    /// The largest price, item subtotal (price x quantity) or order total the store accepts:
    /// 10000000000.00 (10^12 cents). With quantities of at most `OrderItem.maximumQuantity`
    /// (10^6), a subtotal of amounts within bounds is at most 10^18 cents and a running total
    /// at most 10^12 + 10^18, so every step fits in Int64 before it is checked.
    public static let maximum = Money(minorUnits: 1_000_000_000_000)

    /// Parses a plain decimal such as `2.49`, `3`, `0.1` or `1e2` (`5.` and `.5` too, as 5.00
    /// and 0.50): at least 0, at most two fraction digits. Nil for anything else (`0.125`, `-1`,
    /// `abc`, `1e999`).
    public init?(_ text: String) {
        guard let cents = Money.parseCents(text) else { return nil }
        self.minorUnits = cents
    }

    /// The amount with exactly two fraction digits: `4.98`, `0.30`.
    public var description: String {
        let sign = minorUnits < 0 ? "-" : ""
        let magnitude = minorUnits.magnitude
        let cents = magnitude % 100
        return "\(sign)\(magnitude / 100).\(cents < 10 ? "0" : "")\(cents)"
    }

    /// The amount as a `Decimal`, exactly.
    public var decimal: Decimal { Decimal(minorUnits) / 100 }

    public static func < (lhs: Money, rhs: Money) -> Bool { lhs.minorUnits < rhs.minorUnits }

    /// Adds, trapping on overflow (more than 92 quadrillion). The store itself uses `adding(_:)`.
    public static func + (lhs: Money, rhs: Money) -> Money { Money(minorUnits: lhs.minorUnits + rhs.minorUnits) }

    /// Multiplies, trapping on overflow. The store itself uses `multiplied(by:)`.
    public static func * (lhs: Money, rhs: Int) -> Money { Money(minorUnits: lhs.minorUnits * Int64(rhs)) }

    /// The sum, or nil if it does not fit in Int64.
    public func adding(_ other: Money) -> Money? {
        let (sum, overflow) = minorUnits.addingReportingOverflow(other.minorUnits)
        return overflow ? nil : Money(minorUnits: sum)
    }

    /// The amount times `factor`, or nil if it does not fit in Int64.
    public func multiplied(by factor: Int) -> Money? {
        let (product, overflow) = minorUnits.multipliedReportingOverflow(by: Int64(factor))
        return overflow ? nil : Money(minorUnits: product)
    }

    /// What a decimal text is as an amount.
    package enum ParsedAmount: Sendable, Equatable {
        /// A plain non-negative decimal exact to the cent: this many cents (`2.49` is 249).
        case cents(Int64)
        /// A plain non-negative decimal exact to the cent, but more cents than Int64 holds.
        case tooLarge
        /// Not a non-negative decimal with at most two fraction digits.
        case invalid
    }

    /// Cents of a JSON-number-shaped decimal, or nil if negative, not exact to the cent, or too large.
    static func parseCents(_ text: String) -> Int64? {
        if case .cents(let cents) = parseAmount(text) { return cents }
        return nil
    }

    /// The cents of the common shape, `1 to 15 digits` optionally followed by `.` and one or two
    /// digits (`2.49`, `12`, `0.5`), read in place; nil for any other text, which `parseAmount`
    /// reads the general way (exponents, trailing zeros, signs). Every item of an order's feed
    /// has a price: the general way built four arrays for each.
    static func plainCents(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { bytes -> Int64? in
            var value: Int64 = 0
            var index = 0
            while index < bytes.count, bytes[index] &- 48 < 10 {
                // More than 15 integer digits are the general parser's (it tells too large from
                // invalid): stop before they could overflow `value` (19 digits would trap).
                guard index < 15 else { return nil }
                value = value * 10 + Int64(bytes[index] &- 48)
                index += 1
            }
            guard index > 0 else { return nil }
            var fractionDigits = 0
            if index < bytes.count {
                guard bytes[index] == UInt8(ascii: "."), bytes.count - index - 1 == 1 || bytes.count - index - 1 == 2 else {
                    return nil
                }
                index += 1
                while index < bytes.count {
                    guard bytes[index] &- 48 < 10 else { return nil }
                    value = value * 10 + Int64(bytes[index] &- 48)
                    fractionDigits += 1
                    index += 1
                }
            }
            return fractionDigits == 2 ? value : fractionDigits == 1 ? value * 10 : value * 100
        }
    }

    /// Parses a JSON-number-shaped decimal, telling an amount too large for Int64 from one that
    /// is not an amount at all.
    package static func parseAmount(_ text: String) -> ParsedAmount {
        if let cents = plainCents(text) { return .cents(cents) }
        return parseAnyAmount(text)
    }

    /// `parseAmount` for any shape (signs, exponents, trailing zeros); the reference the fast
    /// path `plainCents` is tested against.
    static func parseAnyAmount(_ text: String) -> ParsedAmount {
        if text.utf8.first == UInt8(ascii: "-") {
            // Any zero (-0, -0.00, -0.0e0) is zero; any other negative is refused.
            guard case .cents(0) = parseMagnitude(Substring(text).utf8.dropFirst()) else { return .invalid }
            return .cents(0)
        }
        return parseMagnitude(Substring(text).utf8[...])
    }

    /// `parseAnyAmount` without a sign.
    private static func parseMagnitude(_ utf8: Substring.UTF8View) -> ParsedAmount {
        guard !utf8.isEmpty else { return .invalid }
        var integerDigits: [UInt8] = []
        var fractionDigits: [UInt8] = []
        var exponent = 0
        var part = 0 // 0 integer, 1 fraction
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if part == 0 { integerDigits.append(byte - 48) } else { fractionDigits.append(byte - 48) }
            case UInt8(ascii: ".") where part == 0:
                part = 1
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                // One sign at most, then digits: Int("+2") after a dropped "+" let "1e++2" through.
                var rest = utf8[utf8.index(after: index)...]
                let negative = rest.first == UInt8(ascii: "-")
                if negative || rest.first == UInt8(ascii: "+") { rest = rest.dropFirst() }
                guard !rest.isEmpty, rest.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                    return .invalid
                }
                let magnitude = Int(String(decoding: rest, as: UTF8.self)) ?? Int.max
                let value = negative ? -magnitude : magnitude
                // Zero is zero however far shifted (0e1000); 1e999 is an amount, only far too
                // large, and so is any nonzero digit shifted that far.
                let zero = !(integerDigits + fractionDigits).contains(where: { $0 != 0 })
                guard abs(value) < 1000 || zero else { return value > 0 ? .tooLarge : .invalid }
                if zero, !(integerDigits.isEmpty && fractionDigits.isEmpty) { return .cents(0) }
                exponent = value
                index = utf8.endIndex
                continue
            default:
                return .invalid
            }
            index = utf8.index(after: index)
        }
        guard !integerDigits.isEmpty || !fractionDigits.isEmpty else { return .invalid }
        // Shift the decimal point by the exponent, then require at most two fraction digits.
        var digits = integerDigits + fractionDigits
        var pointPosition = integerDigits.count + exponent
        while pointPosition > digits.count { digits.append(0) }
        while pointPosition < 0 { digits.insert(0, at: 0); pointPosition += 1 }
        let fraction = digits[pointPosition...].reversed().drop(while: { $0 == 0 })
        guard fraction.count <= 2 else { return .invalid }
        var cents: Int64 = 0
        let wanted =
            Array(digits[..<pointPosition]) + Array(digits[pointPosition...].prefix(2))
            + Array(repeating: 0, count: max(0, 2 - (digits.count - pointPosition)))
        for digit in wanted {
            let (shifted, overflow1) = cents.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { return .tooLarge }
            cents = sum
        }
        return .cents(cents)
    }
}

extension Money: Codable {
    /// Encoded as a JSON number with the exact value (`2.49`), decoded from one; a number with
    /// more than two fraction digits, or beyond what 64-bit cents hold, is a decoding error.
    /// Reads what `encode(to:)` writes: a number with at most 2 fraction digits, negative
    /// included (`Money(minorUnits: -5)` encoded, then failed to decode).
    ///
    /// A decoder hands over a `Decimal`, not the number's text, and Foundation's `JSONDecoder`
    /// keeps 38 significant digits: a longer number (`0.1000000000000000000000000000000000000000001`)
    /// is rounded before it gets here, and decodes as the amount it was rounded to. The feed's
    /// own parser (`Store.sync`) reads every digit, and refuses it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let decimal = try container.decode(Decimal.self)
        let text = NSDecimalNumber(decimal: decimal).stringValue
        let negative = text.hasPrefix("-")
        switch Money.parseAmount(negative ? String(text.dropFirst()) : text) {
        case .cents(let cents): self = Money(minorUnits: negative ? -cents : cents)
        case .tooLarge:
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(text) is not an amount of money: more cents than 64 bits hold")
        case .invalid:
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\(text) is not an amount of money: at most 2 fraction digits")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(decimal)
    }
}
