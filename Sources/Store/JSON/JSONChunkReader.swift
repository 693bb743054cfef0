import Foundation

/// Hands a file to `JSONParser` in chunks, so a document of any size is parsed in a buffer of
/// about a chunk (or of its largest record, if that is bigger) instead of being held whole.
///
/// The parser sees only the bytes up to a *safe end*: the last position, found by a quick scan
/// (strings skipped with memchr), that lies outside any string, number or literal and at most
/// two levels deep (between the members of the top-level object or the elements of its arrays).
/// So every record of a feed's arrays is whole in the buffer when the parser starts it, and the
/// parser asks for more only between records (in `skipWhitespace`). Bytes before the parser's
/// position are dropped at each refill; their newlines are counted, so errors still give the
/// line and column in the whole document.
///
/// A read error ends the input early; it is kept in `failure`, which the caller reports instead
/// of the parse error that the cut-off document then causes.
final class JSONChunkReader {
    static let chunkSize = 1 << 20

    private let descriptor: Int32
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes in `buffer`.
    private var filled = 0
    /// The document offset of `buffer[0]`.
    private(set) var base = 0
    /// Lines before `buffer[0]` (newlines dropped), and the document offset where the line
    /// holding `buffer[0]` starts: for error positions.
    private(set) var linesBefore = 0
    private(set) var lineStart = 0
    private(set) var isAtEnd = false
    private(set) var failure: (any Error)?
    /// The document's size, when the descriptor is a regular file (a hint for reserving).
    let size: Int?

    // The scan that finds the safe end.
    private var scanned = 0
    private var safeEnd = 0
    private var depth = 0
    private var inString = false
    private var stringStart = 0

    /// Reads from `descriptor`, which the caller keeps open (and closes) for the reader's life,
    /// `chunkSize` bytes at a time at first (tests use tiny chunks to cut every token).
    init(descriptor: Int32, chunkSize: Int = JSONChunkReader.chunkSize) {
        self.descriptor = descriptor
        capacity = max(chunkSize, 1)
        buffer = .allocate(capacity: capacity)
        var status = stat()
        size = fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : nil
    }

    deinit { buffer.deallocate() }

    /// Whether the file at `descriptor` may hold a member named `name` (ASCII letters) anywhere:
    /// false only if its bytes hold neither `"name"` nor a `\u` escape (the only way to write a
    /// letter otherwise). A byte search, without parsing: sync skims every page for its `next`
    /// link before it reads the page, and most pages have none. Reads with `pread`, so the
    /// descriptor's position is left as it was; a read error answers true (the strict skim
    /// then reports it).
    static func mayHoldName(_ name: String, descriptor: Int32, blockSize: Int = chunkSize) -> Bool {
        let quoted = Array(("\"" + name + "\"").utf8)
        // The search jumps between the occurrences of the name's rarest letter.
        let rarity = Array("zqxjkvbpygfwmucldrhsnioate".utf8)
        let anchorIndex = quoted.indices.dropFirst().dropLast().min {
            (rarity.firstIndex(of: quoted[$0]) ?? -1) < (rarity.firstIndex(of: quoted[$1]) ?? -1)
        }
        guard let anchorIndex else { return true }
        let anchor = Int32(quoted[anchorIndex])
        let overlap = quoted.count
        let capacity = max(blockSize, overlap * 2)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        var kept = 0
        var offset: off_t = 0
        while true {
            let got = pread(descriptor, buffer + kept, capacity - kept, offset)
            if got < 0 {
                if errno == EINTR { continue }
                return true
            }
            if got == 0 { return false }
            offset += off_t(got)
            let filled = kept + got
            if found(
                anchor, in: buffer, filled,
                where: { at in
                    let start = at - anchorIndex
                    return start >= 0 && start + quoted.count <= filled
                        && quoted.withUnsafeBufferPointer { memcmp(buffer + start, $0.baseAddress!, quoted.count) == 0 }
                })
            {
                return true
            }
            if found(
                Int32(UInt8(ascii: "\\")), in: buffer, filled,
                where: { at in
                    at + 1 < filled && buffer[at + 1] == UInt8(ascii: "u")
                })
            {
                return true
            }
            // The last bytes again at the start: a match cut by the block's end is whole next time.
            kept = min(overlap, filled)
            (buffer).update(from: buffer + filled - kept, count: kept)
        }
    }

    /// Whether some occurrence of `byte` in `buffer[0..<count]` satisfies `test` (its position).
    private static func found(
        _ byte: Int32, in buffer: UnsafeMutablePointer<UInt8>, _ count: Int, where test: (Int) -> Bool
    ) -> Bool {
        var position = 0
        while position < count, let hit = memchr(buffer + position, byte, count - position) {
            let at = buffer.distance(to: hit.assumingMemoryBound(to: UInt8.self))
            if test(at) { return true }
            position = at + 1
        }
        return false
    }

    /// The bytes the parser may read now: from `buffer[0]` to the safe end.
    var window: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: buffer, count: safeEnd) }

    /// Drops the bytes before `keep` and reads until the safe end moves past what the parser
    /// had, or the input ends. Returns false when there is nothing more (the end, or a failure).
    func advance(droppingBefore keep: Int) -> Bool {
        guard !isAtEnd else { return false }
        drop(keep)
        let previous = safeEnd
        while safeEnd <= previous && !isAtEnd {
            if filled == capacity {
                // One value bigger than the buffer (a long string, a huge record): grow.
                let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
                larger.update(from: buffer, count: filled)
                buffer.deallocate()
                buffer = larger
                capacity *= 2
            }
            let got = Foundation.read(descriptor, buffer + filled, capacity - filled)
            if got < 0 {
                if errno == EINTR { continue }
                failure = FeedSourceError.unreadable(path: "", reason: String(cString: strerror(errno)))
                isAtEnd = true
            } else if got == 0 {
                isAtEnd = true
            } else {
                filled += got
                scan()
            }
        }
        if isAtEnd { safeEnd = filled }
        return safeEnd > previous
    }

    private func drop(_ keep: Int) {
        guard keep > 0 else { return }
        // Count the dropped lines: memchr from newline to newline.
        var position = 0
        while position < keep, let found = memchr(buffer + position, 0x0A, keep - position) {
            let at = buffer.distance(to: found.assumingMemoryBound(to: UInt8.self))
            linesBefore += 1
            lineStart = base + at + 1
            position = at + 1
        }
        (buffer).update(from: buffer + keep, count: filled - keep)
        filled -= keep
        scanned -= keep
        safeEnd -= keep
        stringStart -= keep
        base += keep
    }

    /// Moves the safe end over the newly read bytes.
    private func scan() {
        var index = scanned
        let end = filled
        while index < end {
            if inString {
                guard let found = memchr(buffer + index, Int32(UInt8(ascii: "\"")), end - index) else {
                    index = end
                    break
                }
                let quote = buffer.distance(to: found.assumingMemoryBound(to: UInt8.self))
                var backslashes = 0
                while quote - backslashes - 1 >= stringStart, buffer[quote - backslashes - 1] == UInt8(ascii: "\\") {
                    backslashes += 1
                }
                index = quote + 1
                if backslashes % 2 == 1 { continue }
                inString = false
                if depth <= 2 { safeEnd = index }
                continue
            }
            switch buffer[index] {
            case UInt8(ascii: "\""):
                inString = true
                stringStart = index + 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                if depth <= 2 { safeEnd = index + 1 }
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth <= 2 { safeEnd = index + 1 }
            case 0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: ","), UInt8(ascii: ":"):
                if depth <= 2 { safeEnd = index + 1 }
            default:
                // Inside a number or a literal: not a place to stop.
                break
            }
            index += 1
        }
        scanned = index
    }
}
