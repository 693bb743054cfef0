/// 64-bit FNV-1a: a fast, stable (across runs and machines) hash for change detection.
/// Not for security: sync uses it to tell whether a record changed since it was received.
enum FNV1a {
    static func hash<Bytes: Sequence<UInt8>>(_ bytes: Bytes, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    static func hash(_ text: String) -> UInt64 { hash(text.utf8) }
}
