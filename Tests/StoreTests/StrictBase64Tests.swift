import Foundation
import Testing

@testable import Store

/// A feed image's base64 is decoded in one pass over its UTF-8 (it was cleaned into a copy,
/// copied again into a `Data` and decoded by Foundation). The one-pass decoder must accept and
/// refuse exactly what that did, with the same bytes and the same reasons.
@Suite("Strict base64", .timeLimit(.minutes(10)))
struct StrictBase64Tests {
    /// The decoder as it was (2026-11-27), the reference.
    static func reference(_ text: String) -> Result<Data, StrictBase64.Refusal> {
        var cleaned = [UInt8]()
        var padding = 0
        var position = 0
        for scalar in text.unicodeScalars {
            position += 1
            let value = scalar.value
            if value == 0x0A || value == 0x0D { continue }
            let alphabet =
                (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value) || (0x30...0x39).contains(value)
                || value == 0x2B || value == 0x2F
            if value == 0x3D {
                padding += 1
            } else if !alphabet {
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

    private static func same(_ text: String) -> Bool {
        switch (StrictBase64.decode(text), reference(text)) {
        case (.success(let a), .success(let b)): a == b
        case (.failure(let a), .failure(let b)): a == b
        default: false
        }
    }

    @Test("random texts over the alphabet's edges: the same bytes or the same refusal")
    func sameAsFoundationOnRandomTexts() {
        var generator = SplitMix(seed: 0x5EED_B64)
        let pieces = ["A", "Q", "z", "0", "+", "/", "=", "==", "\n", "\r\n", "!", " ", "é", "\u{0}", "-", "_", "AAAA", "QUJD"]
        var differing: [String] = []
        var accepted = 0
        for _ in 0..<100_000 {
            let length = Int.random(in: 0...14, using: &generator)
            let text = (0..<length).map { _ in pieces.randomElement(using: &generator)! }.joined()
            if !Self.same(text) { differing.append(text) }
            if case .success = StrictBase64.decode(text) { accepted += 1 }
        }
        #expect(differing.isEmpty, "\(differing.prefix(10).map { $0.debugDescription })")
        #expect(accepted > 1_000, "too few valid texts to compare: \(accepted)")
    }

    @Test("the encodings of random bytes, wrapped at random: decoded to those bytes")
    func roundTripsRandomBytes() {
        var generator = SplitMix(seed: 0xB17E5)
        for _ in 0..<2_000 {
            let bytes = Data(
                (0..<Int.random(in: 1...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            var text = bytes.base64EncodedString()
            for _ in 0..<Int.random(in: 0...3, using: &generator) {
                let index = text.index(text.startIndex, offsetBy: Int.random(in: 0...text.count, using: &generator))
                text.insert(contentsOf: Bool.random(using: &generator) ? "\n" : "\r\n", at: index)
            }
            #expect(StrictBase64.decode(text) == .success(bytes), "\(text)")
            #expect(Self.same(text))
        }
    }

    @Test("each refusal, named as before")
    func refusals() {
        #expect(StrictBase64.decode("") == .failure(.empty))
        #expect(StrictBase64.decode("\r\n") == .failure(.empty))
        #expect(StrictBase64.decode("AAA") == .failure(.length(3)))
        #expect(StrictBase64.decode("A===") == .failure(.tooMuchPadding(3)))
        #expect(StrictBase64.decode("AA=A") == .failure(.misplacedPadding(position: 4)))
        #expect(StrictBase64.decode("\nAé==") == .failure(.character("é", position: 3)))
        #expect(StrictBase64.decode("QUI=") == .success(Data("AB".utf8)))
    }
}
