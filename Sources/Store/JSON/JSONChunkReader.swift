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
