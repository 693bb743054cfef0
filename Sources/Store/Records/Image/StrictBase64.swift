import Foundation

/// An image's inline `data` (<doc:FeedFormat>): base64 of RFC 4648, section 4 (the standard
/// alphabet, padded with `=` to a whole number of 4-character groups). CR and LF are skipped
/// anywhere, since tools wrap base64 at 76 characters; any other character is refused, never
/// dropped (Foundation's `.ignoreUnknownCharacters` stored "@@@!" as an empty image and
/// "iVBO!!Rw0KGgo=" as other bytes than its writer meant).
enum StrictBase64 {
    /// The bytes `text` encodes, or why it is no such base64.
    static func decode(_ text: String) -> Result<Data, Refusal> {
        var cleaned = [UInt8]()
        cleaned.reserveCapacity(text.utf8.count)
        var padding = 0
        var position = 0 // in characters (Unicode scalars), for the message
        for scalar in text.unicodeScalars {
            position += 1
            let value = scalar.value
            if value == 0x0A || value == 0x0D { continue }
            if value == 0x3D { // "="
                padding += 1
            } else if !isAlphabet(value) {
                return .failure(.character(scalar, position: position))
            } else if padding > 0 {
                return .failure(.misplacedPadding(position: position))
            }
            cleaned.append(UInt8(truncatingIfNeeded: value))
        }
        if cleaned.isEmpty { return .failure(.empty) }
        guard cleaned.count % 4 == 0 else { return .failure(.length(cleaned.count)) }
        guard padding <= 2 else { return .failure(.tooMuchPadding(padding)) }
        guard let data = Data(base64Encoded: Data(cleaned)) else { return .failure(.length(cleaned.count)) }
        return .success(data)
    }

    private static func isAlphabet(_ value: UInt32) -> Bool {
        (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value) || (0x30...0x39).contains(value)
            || value == 0x2B || value == 0x2F
    }

    /// Why a `data` text is refused, said as a feed problem says it.
    enum Refusal: Error, Equatable, CustomStringConvertible {
        case empty
        case character(Unicode.Scalar, position: Int)
        case misplacedPadding(position: Int)
        case length(Int)
        case tooMuchPadding(Int)

        var description: String {
            switch self {
            case .empty:
                "is empty: an image has at least one byte"
            case .character(let scalar, let position):
                "is not valid base64: \(Self.describe(scalar)) at character \(position) is not in the standard alphabet "
                    + "(A-Z, a-z, 0-9, '+', '/', '=' padding; CR and LF are skipped)"
            case .misplacedPadding(let position):
                "is not valid base64: character \(position) follows '=' padding, which only ends the text"
            case .length(let count):
                "is not valid base64: \(count) characters (CR and LF aside), not a multiple of 4 (pad the last group with '=')"
            case .tooMuchPadding(let count):
                "is not valid base64: \(count) '=' at the end; padding is at most two"
            }
        }

        private static func describe(_ scalar: Unicode.Scalar) -> String {
            scalar.properties.generalCategory == .control || scalar == " " || scalar.value > 0x7E
                ? "U+" + String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4) : "'\(scalar)'"
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
