import Foundation

/// A record's content hash, for telling whether it changed since sync last received it.
/// Fields are hashed directly (length-prefixed, so field boundaries count), not through JSON:
/// this runs once or twice per record of every sync.
struct RecordHash {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    fileprivate mutating func byte(_ byte: UInt8) {
        value ^= UInt64(byte)
        value &*= 0x0000_0100_0000_01B3
    }

    mutating func add(_ integer: Int64) {
        var bits = UInt64(bitPattern: integer)
        for _ in 0..<8 {
            byte(UInt8(truncatingIfNeeded: bits))
            bits >>= 8
        }
    }

    mutating func add(_ text: String) {
        add(Int64(text.utf8.count))
        var text = text
        // The contiguous bytes in place (native strings are): a tight loop, no iterator.
        text.withUTF8 { units in
            var value = self.value
            for unit in units {
                value ^= UInt64(unit)
                value &*= 0x0000_0100_0000_01B3
            }
            self.value = value
        }
    }

    mutating func add(_ text: String?) {
        if let text {
            byte(1)
            add(text)
        } else {
            byte(0)
        }
    }

    mutating func add(_ data: Data) {
        add(Int64(data.count))
        for unit in data { byte(unit) }
    }

    /// A token's hash, so equal tokens can be told apart from different ones without keeping it.
    static func of(token: String?) -> UInt64 {
        var hash = RecordHash()
        hash.add(token)
        return hash.value
    }

    static func of(image data: Data, contentType: String?) -> UInt64 {
        var hash = RecordHash()
        hash.add(contentType)
        hash.add(data)
        return hash.value
    }
}

extension RecordHash {
    /// A column value, tagged with its storage class so `1` and `'1'` differ.
    /// A value as SQLite stores it, where binding changes it: a NaN is bound as NULL, and a REAL
    /// column keeps -0.0 as 0 (an integral real is stored as an integer). A feed record hashed
    /// from its values as bound was otherwise never equal to itself read back: "changed
    /// locally" at every later sync (kept under keep-existing, a conflict under three-way).
    mutating func add(_ value: SQLValue) {
        switch value {
        case .null: byte(0)
        case .integer(let integer): byte(1); add(integer)
        case .real(let real) where real.isNaN: byte(0)
        case .real(let real): byte(2); add(Int64(bitPattern: (real == 0 ? 0.0 : real).bitPattern))
        case .text(let text): byte(3); add(text)
        case .blob(let data): byte(4); add(data)
        }
    }
}
