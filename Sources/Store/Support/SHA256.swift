import Foundation

/// SHA-256 (FIPS 180-4), for migration checksums and published files (hashed as they are
/// read). Foundation on Linux has no CryptoKit, and one hash function does not justify a
/// dependency.
struct SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    /// The lowercase hex digest of `bytes`.
    static func hexDigest<Bytes: Collection<UInt8>>(of bytes: Bytes) -> String {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// A file that could not be read: the `errno` of the failed read.
    struct ReadFailure: Error {
        let code: Int32
    }

    /// The lowercase hex digest of the whole file open at `descriptor`, read from its start in
    /// chunks of 1 MiB with `pread` (memory stays near one chunk however large the file; the
    /// descriptor's position is left as it was).
    static func hexDigest(ofDescriptor descriptor: Int32) throws(ReadFailure) -> String {
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ReadFailure(code: errno)
            }
            if count == 0 { break }
            hasher.update(buffer[..<count])
            offset += off_t(count)
        }
        return hasher.finalize()
    }

    private var h: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
    /// Bytes not yet making a whole 64-byte block.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0
    private var w = [UInt32](repeating: 0, count: 64)

    /// A hasher with nothing hashed yet: `update` it, then `finalize` it once.
    init() {
        pending.reserveCapacity(64)
    }

    /// Hashes `bytes` after those given before.
    mutating func update<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        length &+= UInt64(bytes.count)
        if bytes.withContiguousStorageIfAvailable({ update(buffer: $0) }) == nil {
            Array(bytes).withUnsafeBufferPointer { update(buffer: $0) }
        }
    }

    /// Whole blocks straight from `buffer`; the rest waits in `pending`.
    private mutating func update(buffer: UnsafeBufferPointer<UInt8>) {
        var index = 0
        if !pending.isEmpty {
            let taken = min(64 - pending.count, buffer.count)
            pending.append(contentsOf: buffer[0..<taken])
            index = taken
            guard pending.count == 64 else { return }
            compress(pending)
            pending.removeAll(keepingCapacity: true)
        }
        while buffer.count - index >= 64 {
            compress(buffer[index..<index + 64])
            index += 64
        }
        pending.append(contentsOf: buffer[index...])
    }

    /// The lowercase hex digest of everything given to `update`.
    mutating func finalize() -> String {
        let bitLength = length &* 8
        var tail = pending
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        for start in stride(from: 0, to: tail.count, by: 64) { compress(tail[start..<start + 64]) }
        let hex = Array("0123456789abcdef")
        var digest = ""
        for word in h {
            for shift in stride(from: 28, through: 0, by: -4) { digest.append(hex[Int((word >> UInt32(shift)) & 0xF)]) }
        }
        return digest
    }

    /// One 64-byte block.
    private mutating func compress<Block: Collection<UInt8>>(_ block: Block) where Block.Index == Int {
        let chunk = block.startIndex
        for i in 0..<16 {
            let j = chunk + i * 4
            w[i] = UInt32(block[j]) << 24 | UInt32(block[j + 1]) << 16 | UInt32(block[j + 2]) << 8 | UInt32(block[j + 3])
        }
        for i in 16..<64 {
            let s0 = Self.rotr(w[i - 15], 7) ^ Self.rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = Self.rotr(w[i - 2], 17) ^ Self.rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
        for i in 0..<64 {
            let s1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
            let choice = (e & f) ^ (~e & g)
            let t1 = hh &+ s1 &+ choice &+ Self.k[i] &+ w[i]
            let s0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let t2 = s0 &+ majority
            (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        h[0] = h[0] &+ a
        h[1] = h[1] &+ b
        h[2] = h[2] &+ c
        h[3] = h[3] &+ d
        h[4] = h[4] &+ e
        h[5] = h[5] &+ f
        h[6] = h[6] &+ g
        h[7] = h[7] &+ hh
    }

    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }
}
