import Foundation
import Testing

@testable import Store

@Suite("SHA256")
struct SHA256Tests {
    // FIPS 180-2 appendix B and other published vectors.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        // 56 bytes: the length no longer fits in the first block, so padding takes a second one.
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
        (
            "The quick brown fox jumps over the lazy dog",
            "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"
        ),
    ])
    func matchesPublishedVectors(message: String, digest: String) {
        #expect(SHA256.hexDigest(of: message.utf8) == digest)
    }

    @Test func hashesAMillionAs() {
        let digest = SHA256.hexDigest(of: repeatElement(UInt8(ascii: "a"), count: 1_000_000))
        #expect(digest == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func givesSixtyFourLowercaseHexDigitsThatChangeWithEveryByte() {
        var seen = Set<String>()
        for length in 0...130 {
            let digest = SHA256.hexDigest(of: [UInt8](repeating: 0x61, count: length))
            #expect(digest.count == 64)
            #expect(digest.allSatisfy { "0123456789abcdef".contains($0) })
            seen.insert(digest)
        }
        #expect(seen.count == 131)
    }

    @Test("fed in pieces of any size, or read from a file, it gives the one-shot digest")
    func updatesInPiecesAndFromFiles() throws {
        let bytes = (0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 3) }
        let whole = SHA256.hexDigest(of: bytes)
        for piece in [1, 3, 63, 64, 65, 1000] {
            var hasher = SHA256()
            for start in stride(from: 0, to: bytes.count, by: piece) {
                hasher.update(bytes[start..<min(start + piece, bytes.count)])
            }
            #expect(hasher.finalize() == whole, "pieces of \(piece)")
        }
        // More than one 1 MiB read, and not a whole number of blocks.
        let large = Data((0..<3_000_003).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) })
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sha256-\(UUID().uuidString)").path
        try large.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let descriptor = open(path, O_RDONLY)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        #expect(try SHA256.hexDigest(ofDescriptor: descriptor) == SHA256.hexDigest(of: large))
        #expect(throws: SHA256.ReadFailure.self) { try SHA256.hexDigest(ofDescriptor: -1) }
    }
}
