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
        let parsed = parseSignedCents(text)
        // Any zero (-0, -0.00, -0.0e0) is zero; any other negative is refused, however large.
        if text.utf8.first == UInt8(ascii: "-"), case .cents(let cents) = parsed, cents == 0 { return parsed }
        return text.utf8.first == UInt8(ascii: "-") ? .invalid : parsed
    }

    /// The cents of a decimal with an optional minus sign: any `Int64`, `Int64.min` included
    /// (its magnitude is one more than `Int64.max`). What `Codable` reads.
    static func parseSignedCents(_ text: String) -> ParsedAmount {
        let negative = text.utf8.first == UInt8(ascii: "-")
        switch parseMagnitude(negative ? Substring(text).utf8.dropFirst() : Substring(text).utf8[...]) {
        case .cents(let cents) where negative:
            return cents <= Int64.min.magnitude ? .cents(Int64(truncatingIfNeeded: 0 &- cents)) : .tooLarge
        case .cents(let cents): return cents <= UInt64(Int64.max) ? .cents(Int64(cents)) : .tooLarge
        case .tooLarge: return .tooLarge
        case .invalid: return .invalid
        }
    }

    /// An amount without its sign, before the sign decides what fits in `Int64`.
    private enum Magnitude {
        case cents(UInt64)
        /// Whole cents, more than `UInt64` holds.
        case tooLarge
        /// Not a decimal in whole cents.
        case invalid
    }

    /// `parseAnyAmount` without a sign. Too large or not in whole cents is decided from the
    /// value the digits and the exponent make together, not from the exponent's sign:
    /// `0.<1500 zeros>1e1000` is 10^-501 (not whole cents), `1<1500 zeros>e-1000` is 10^500 (too
    /// large). A number both too large and finer than a cent is not whole cents.
    private static func parseMagnitude(_ utf8: Substring.UTF8View) -> Magnitude {
        guard !utf8.isEmpty else { return .invalid }
        var digits: [UInt8] = [] // the integer digits, then the fraction digits
        var integerCount = 0
        var seenPoint = false
        var exponent = 0
        var index = utf8.startIndex
        scan: while index != utf8.endIndex {
            let byte = utf8[index]
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits.append(byte - 48)
                if !seenPoint { integerCount += 1 }
            case UInt8(ascii: ".") where !seenPoint:
                seenPoint = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                // One sign at most, then digits: Int("+2") after a dropped "+" let "1e++2" through.
                var rest = utf8[utf8.index(after: index)...]
                let negative = rest.first == UInt8(ascii: "-")
                if negative || rest.first == UInt8(ascii: "+") { rest = rest.dropFirst() }
                guard !rest.isEmpty, rest.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
                    return .invalid
                }
                // Held at 2^60 once past 2^56 (no text has that many digits), so the places
                // below cannot overflow; such an exponent is far out of bounds either way.
                var magnitude = 0
                for byte in rest { magnitude = magnitude < 1 << 56 ? magnitude * 10 + Int(byte - 48) : 1 << 60 }
                exponent = negative ? -magnitude : magnitude
                break scan
            default:
                return .invalid
            }
            index = utf8.index(after: index)
        }
        guard !digits.isEmpty else { return .invalid }
        // Zero is zero however far shifted (0e1000, 0.00e-99999).
        guard let first = digits.firstIndex(where: { $0 != 0 }), let last = digits.lastIndex(where: { $0 != 0 }) else {
            return .cents(0)
        }
        // `digits[i]` counts 10^(integerCount - 1 - i + exponent).
        let highest = integerCount - 1 - first + exponent
        let lowest = integerCount - 1 - last + exponent
        // A nonzero digit below the cents.
        guard lowest >= -2 else { return .invalid }
        // 10^19 is 10^21 cents, past 64 bits; below it, the overflow checks decide.
        guard highest <= 18 else { return .tooLarge }
        var cents: UInt64 = 0
        for place in stride(from: highest, through: -2, by: -1) {
            let position = integerCount - 1 - place + exponent
            let digit = position <= last ? UInt64(digits[position]) : 0
            let (shifted, overflow1) = cents.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = shifted.addingReportingOverflow(digit)
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
    /// included (`Money(minorUnits: -5)` encoded, then failed to decode), and every `Int64` of
    /// cents, `Int64.min` (`-92233720368547758.08`) too.
    ///
    /// A decoder hands over a `Decimal`, not the number's text, and Foundation's `JSONDecoder`
    /// keeps 38 significant digits: a longer number (`0.1000000000000000000000000000000000000000001`)
    /// is rounded before it gets here, and decodes as the amount it was rounded to. The feed's
    /// own parser (`Store.sync`) reads every digit, and refuses it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let decimal = try container.decode(Decimal.self)
        let text = NSDecimalNumber(decimal: decimal).stringValue
        switch Money.parseSignedCents(text) {
        case .cents(let cents): self = Money(minorUnits: cents)
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
