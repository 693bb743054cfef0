import Foundation

/// Random identifiers (version-4 UUIDs) that stay random when the process has no file
/// descriptor left.
///
/// Foundation's `UUID()` on Linux reads /dev/urandom: out of descriptors (EMFILE) it returns
/// `00000000-0000-4000-8000-000000000000` every time, without an error. Two pages of one feed
/// then shared a spool file (the second overwriting the first) and two publishers a generation
/// id. `SystemRandomNumberGenerator` asks the kernel directly (getrandom on Linux,
/// arc4random on Apple platforms), with no descriptor, and traps rather than return anything
/// but random bytes.
package enum RandomIdentifier {
    /// A new random version-4 UUID (RFC 9562, section 5.4).
    package static func uuid() -> UUID {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        var bytes =
            (0..<8).map { UInt8(truncatingIfNeeded: high >> (56 - 8 * $0)) }
            + (0..<8).map { UInt8(truncatingIfNeeded: low >> (56 - 8 * $0)) }
        bytes[6] = bytes[6] & 0x0F | 0x40 // the version: 4, random
        bytes[8] = bytes[8] & 0x3F | 0x80 // the variant: RFC 9562's
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            ))
    }

    /// `uuid()` as text, uppercase as Foundation writes it (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`).
    package static func uuidString() -> String { uuid().uuidString }
}
