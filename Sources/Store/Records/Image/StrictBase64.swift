import Foundation

/// An image's inline `data` (<doc:FeedFormat>): base64 of RFC 4648, section 4 (the standard
/// alphabet, padded with `=` to a whole number of 4-character groups). CR and LF are skipped
/// anywhere, since tools wrap base64 at 76 characters; any other character is refused, never
/// dropped (Foundation's `.ignoreUnknownCharacters` stored "@@@!" as an empty image and
/// "iVBO!!Rw0KGgo=" as other bytes than its writer meant).
enum StrictBase64 {
    /// The bytes `text` encodes, or why it is no such base64.
    ///
    /// Decoded in one pass over the text's UTF-8 into the result: it copied the text without its
    /// line breaks, then that into a `Data` for Foundation's decoder, so an image's base64 took
    /// about twice its text more than the text and the bytes (a 40 MB text peaked at 222 MB).
    /// Bits past the last byte are ignored, as Foundation's decoder ignores them.
    static func decode(_ text: String) -> Result<Data, Refusal> {
        var text = text
        text.makeContiguousUTF8()
        if let data = text.utf8.withContiguousStorageIfAvailable(decoded) ?? nil { return .success(data) }
        return .failure(refusal(text))
    }

    /// The bytes of well-formed base64 in `bytes` (CR and LF skipped), or nil for anything
    /// `refusal` names.
    private static func decoded(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        var output = Data(count: bytes.count / 4 * 3)
        var written = 0
        let wellFormed = output.withUnsafeMutableBytes { raw -> Bool in
            guard let out = raw.bindMemory(to: UInt8.self).baseAddress else { return false }
            var group: UInt32 = 0
            var inGroup = 0
            var padding = 0
            var count = 0
            for byte in bytes {
                let value = sextets[Int(byte)]
                if value == lineBreak { continue }
                count += 1
                if value == paddingSign {
                    padding += 1
                    group <<= 6
                } else if value == notInAlphabet || padding > 0 {
                    return false
                } else {
                    group = group << 6 | UInt32(value)
                }
                inGroup += 1
                if inGroup == 4 {
                    out[written] = UInt8(truncatingIfNeeded: group >> 16)
                    out[written + 1] = UInt8(truncatingIfNeeded: group >> 8)
                    out[written + 2] = UInt8(truncatingIfNeeded: group)
                    written += 3
                    group = 0
                    inGroup = 0
                }
            }
            guard count > 0, inGroup == 0, padding <= 2 else { return false }
            written -= padding
            return true
        }
        guard wellFormed else { return nil }
        output.count = written
        return output
    }

    /// Each byte's value in the alphabet, or one of the markers below.
    private static let sextets: [UInt8] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt8(byte) - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt8(byte) - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        case UInt8(ascii: "="): paddingSign
        case 0x0A, 0x0D: lineBreak
        default: notInAlphabet
        }
    }
    private static let paddingSign: UInt8 = 0xFD
    private static let lineBreak: UInt8 = 0xFE
    private static let notInAlphabet: UInt8 = 0xFF

    /// Why `text` is no base64, walking it by Unicode scalar as a problem counts positions.
    private static func refusal(_ text: String) -> Refusal {
        var count = 0
        var padding = 0
        var position = 0 // in characters (Unicode scalars), for the message
        for scalar in text.unicodeScalars {
            position += 1
            let value = scalar.value
            if value == 0x0A || value == 0x0D { continue }
            if value == 0x3D { // "="
                padding += 1
            } else if !isAlphabet(value) {
                return .character(scalar, position: position)
            } else if padding > 0 {
                return .misplacedPadding(position: position)
            }
            count += 1
        }
        // `count`: every character but CR and LF, padding included.
        if count == 0 { return .empty }
        guard count % 4 == 0 else { return .length(count) }
        return padding > 2 ? .tooMuchPadding(padding) : .length(count)
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
