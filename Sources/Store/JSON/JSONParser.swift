import Foundation

/// Why a document is not JSON, with where: byte offset, line and column (1-based).
struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    let message: String
    let offset: Int
    let line: Int
    let column: Int

    var description: String { "line \(line), column \(column): \(message)" }
}

/// A value the parser refused to build: it holds more JSON values than the parser's limit
/// (`JSONParser.defaultMaximumValues` unless the caller set one). Thrown while the tree is still
/// small: a tree costs 24 to 60 bytes a value, where the text of `{},` takes 3, so a 48 MB page
/// of empty objects took more than 4 GB.
struct JSONValueLimitError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The most values the tree could hold.
    let limit: Int
    /// Where the value that went over the limit starts, in the whole document.
    let offset: Int
    /// The value's JSON path, when the caller knows it (a feed record's: `orders[0]`).
    var path = ""
    /// The member being read when the limit was reached, when the value is an object's members
    /// read one by one (a feed record's).
    var member: String?

    var description: String {
        let reached = member.map { " (reached in its member '\($0.prefix(60))')" } ?? ""
        return "holds more than \(limit) JSON values\(reached), more than one value may hold "
            + "(each string, number, true, false, null, array and object in it counts, at any depth)"
    }
}

/// A strict RFC 8259 parser over UTF-8 bytes.
///
/// - Invalid UTF-8, unescaped control characters (NUL included), lone surrogate escapes,
///   leading zeros, trailing garbage and an empty document are errors.
/// - Numbers keep their exact text (`1e999` parses; whether it is acceptable is the caller's
///   call), so no value is ever rounded.
/// - Duplicate object keys are kept, in order, for the caller to report.
/// - Nesting deeper than `maximumDepth` is an error, not a stack overflow.
/// - A tree of more than `maximumValues` values is an error (`JSONValueLimitError`), not
///   gigabytes: each `readValue` (and `parse`) builds at most that many.
struct JSONParser {
    static let defaultMaximumDepth = 256
    /// The most values one `readValue` builds unless the caller says otherwise: about 60 MB of
    /// tree at most. A feed record, a manifest (100,000 files of 6 values) and a skimmed member
    /// stay well under it; the store's own documents (a change log element, a segment it merges)
    /// are read without a limit.
    static let defaultMaximumValues = 1_000_000

    /// The bytes being read: the whole document, or the window of a `JSONChunkReader`.
    private var bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    private let maximumDepth: Int
    /// The most values one `readValue` may build.
    let maximumValues: Int
    /// How many more values the tree being built may hold; below zero, the build stops.
    private var valuesLeft = Int.max
    /// Objects' members while they are read, one buffer per depth, reused: each object is then
    /// built at its exact size (an array grown by appends keeps up to twice its room; `{}`
    /// takes none).
    private var memberBuffers: [[JSONMember]] = []
    /// When reading a file in chunks: where the next chunks come from.
    private let reader: JSONChunkReader?
    /// A position (in `bytes`) that a refill must keep, for a `rewind` to it.
    private var pinned: Int?

    /// Parses one JSON document, of at most `maximumValues` values (`Int.max`: any).
    static func parse(
        _ data: Data, maximumDepth: Int = defaultMaximumDepth, maximumValues: Int = defaultMaximumValues
    ) throws -> JSONValue {
        try data.withUnsafeBytes { raw in
            var parser = JSONParser(
                bytes: raw.bindMemory(to: UInt8.self), maximumDepth: maximumDepth, maximumValues: maximumValues)
            return try parser.parseDocument()
        }
    }

    private init(
        bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, maximumValues: Int = defaultMaximumValues,
        reader: JSONChunkReader? = nil
    ) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.maximumValues = maximumValues
        self.reader = reader
    }

    // MARK: Streaming

    /// Reads one document piece by piece: `body` walks it with `forEachMember`,
    /// `forEachElement` and `readValue`, so a large document is never held as one tree (a feed
    /// of a million records is read one record at a time). The same strict rules apply, and
    /// `body` must consume exactly one value; trailing garbage is an error.
    static func read<Result>(
        _ data: Data, maximumDepth: Int = defaultMaximumDepth, maximumValues: Int = defaultMaximumValues,
        _ body: (inout JSONParser) throws -> Result
    ) throws -> Result {
        try data.withUnsafeBytes { raw in
            var parser = JSONParser(
                bytes: raw.bindMemory(to: UInt8.self), maximumDepth: maximumDepth, maximumValues: maximumValues)
            return try parser.readDocument(body)
        }
    }

    /// The same, reading the document from `reader` chunk by chunk: memory stays near a chunk
    /// (or the largest record) however large the file. A read error is left in
    /// `reader.failure` (the parse then fails at the cut).
    static func read<Result>(
        _ reader: JSONChunkReader, maximumDepth: Int = defaultMaximumDepth, maximumValues: Int = defaultMaximumValues,
        _ body: (inout JSONParser) throws -> Result
    ) throws -> Result {
        _ = reader.advance(droppingBefore: 0)
        var parser = JSONParser(
            bytes: reader.window, maximumDepth: maximumDepth, maximumValues: maximumValues, reader: reader)
        return try parser.readDocument(body)
    }

    private mutating func readDocument<Result>(_ body: (inout JSONParser) throws -> Result) throws -> Result {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        guard index < bytes.count else { throw error("the document is empty") }
        let result = try body(&self)
        skipWhitespace()
        guard index == bytes.count else {
            throw error("unexpected \(describeByte()) after the end of the document")
        }
        return result
    }

    /// How many bytes of the document were read so far.
    var offset: Int { (reader?.base ?? 0) + index }

    /// How many bytes of the document are left, when that is known (a hint for reserving).
    var remainingBytes: Int? {
        guard let reader else { return bytes.count - index }
        return reader.size.map { max($0 - offset, 0) }
    }

    /// Keeps the bytes from the current position in memory until `unpin()`, so that a
    /// `rewind(to:)` to it stays possible while reading a file in chunks; returns the offset.
    mutating func pin() -> Int {
        pinned = index
        return offset
    }

    mutating func unpin() { pinned = nil }

    /// Goes back to an earlier `offset` (pinned), at the same depth, to read that value again.
    mutating func rewind(to offset: Int) {
        index = offset - (reader?.base ?? 0)
    }

    /// When the window is used up: drops what was read and moves the window on. False at the
    /// end of the document (or always, for a document in memory).
    private mutating func refill() -> Bool {
        guard let reader else { return false }
        let keep = min(index, pinned ?? index)
        guard reader.advance(droppingBefore: keep) else {
            // Nothing new: the window may still have moved (dropped bytes).
            index -= keep
            pinned = pinned.map { $0 - keep }
            bytes = reader.window
            return false
        }
        index -= keep
        pinned = pinned.map { $0 - keep }
        bytes = reader.window
        return true
    }

    /// Skips the next value without building it: for skimming a document for one member.
    ///
    /// An object or an array is skipped lexically, by its brackets (strings jumped over with
    /// memchr), without reading its names or checking its grammar: a skim only needs to find
    /// where the value ends, and the strict read reports whatever is malformed. A skim of a
    /// feed for its `next` link runs over every record, once per sync.
    mutating func skipValue() throws {
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of the document") }
        switch bytes[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var nesting = 0
            while true {
                if index == bytes.count {
                    // A chunked file's window ends only between records: move it on.
                    guard reader != nil, refill(), index < bytes.count else {
                        throw error("unexpected end of the document")
                    }
                }
                switch bytes[index] {
                case UInt8(ascii: "\""): try skipString()
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    nesting += 1
                    if depth + nesting > maximumDepth { throw error("nesting is deeper than \(maximumDepth) levels") }
                    index += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    nesting -= 1
                    index += 1
                    if nesting == 0 { return }
                default: index += 1
                }
            }
        case UInt8(ascii: "\""): try skipString()
        default: _ = try parseValue()
        }
    }

    /// Moves past the string that starts at `index` (its closing quote is the next quote not
    /// preceded by an odd run of backslashes), without decoding it.
    private mutating func skipString() throws {
        var end = index + 1
        while true {
            guard end < bytes.count,
                let found = memchr(bytes.baseAddress! + end, Int32(UInt8(ascii: "\"")), bytes.count - end)
            else {
                throw error("a string is not closed")
            }
            let quote = bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
            var backslashes = 0
            while quote - backslashes - 1 > index, bytes[quote - backslashes - 1] == UInt8(ascii: "\\") { backslashes += 1 }
            end = quote + 1
            if backslashes % 2 == 0 { break }
        }
        index = end
    }

    /// The value of the top-level member `name` of the document `reader` reads (its first
    /// occurrence), skimming the rest; nil if the document is not an object, has no such
    /// member, or is malformed before it (the strict read reports that).
    static func topLevelMember(_ name: String, in reader: JSONChunkReader) -> JSONValue? {
        struct Found: Error { let value: JSONValue }
        do {
            try read(reader) { parser in
                guard parser.nextKind == .object else { return }
                try parser.forEachMember { key, parser in
                    if key.utf8.elementsEqual(name.utf8) { throw Found(value: try parser.readValue()) }
                    try parser.skipValue()
                }
            }
        } catch let found as Found {
            return found.value
        } catch {}
        return nil
    }

    /// What a value is, told from its first byte.
    enum Kind: CustomStringConvertible {
        case object, array, string, boolean, null, number

        /// As `JSONValue.typeDescription` says it ("an object", "a number", "null"...): what a
        /// problem names.
        var description: String {
            switch self {
            case .object: "an object"
            case .array: "an array"
            case .string: "a string"
            case .boolean: "a boolean"
            case .null: "null"
            case .number: "a number"
            }
        }
    }

    /// What the next value is, from its first byte, without reading it; what is not JSON there
    /// (a number, as this says) is reported by the read after.
    var nextKind: Kind {
        mutating get {
            skipWhitespace()
            return switch index < bytes.count ? bytes[index] : 0 {
            case UInt8(ascii: "{"): .object
            case UInt8(ascii: "["): .array
            case UInt8(ascii: "\""): .string
            case UInt8(ascii: "t"), UInt8(ascii: "f"): .boolean
            case UInt8(ascii: "n"): .null
            default: .number
            }
        }
    }

    /// Reads the next value as strictly as `readValue`, building nothing but one scalar at a
    /// time, and calls `check` every 1,024 elements or members (a cancellation's stop): for a
    /// member the reader ignores. An unknown member of 80 MB was built as a tree (about 850 MB
    /// of memory) that nothing could interrupt.
    mutating func readAndDiscardValue(checking check: () throws -> Void) throws {
        var count = 0
        try readAndDiscardValue(count: &count, checking: check)
    }

    private mutating func readAndDiscardValue(count: inout Int, checking check: () throws -> Void) throws {
        skipWhitespace()
        count += 1
        if count & 1023 == 0 { try check() }
        switch index < bytes.count ? bytes[index] : 0 {
        case UInt8(ascii: "{"): try forEachMember { _, parser in try parser.readAndDiscardValue(count: &count, checking: check) }
        case UInt8(ascii: "["): try forEachElement { _, parser in try parser.readAndDiscardValue(count: &count, checking: check) }
        default: _ = try parseValue()
        }
    }

    /// Reads the next value whole: a tree of at most `maximumValues` values, or
    /// `JSONValueLimitError`.
    mutating func readValue() throws -> JSONValue {
        var allowance = maximumValues
        return try readValue(allowance: &allowance)
    }

    /// Reads the next value whole, taking the values it holds from `allowance`: several values
    /// that share one limit (the members of a record). `JSONValueLimitError` once it would go
    /// below zero.
    mutating func readValue(allowance: inout Int) throws -> JSONValue {
        skipWhitespace()
        valuesLeft = allowance
        defer {
            allowance = valuesLeft
            valuesLeft = Int.max
        }
        return try parseValue()
    }

    /// Reads the next value strictly without building it (`readAndDiscardValue`), and says
    /// what it was (`nextKind`).
    mutating func discardValue(checking check: () throws -> Void = {}) throws -> Kind {
        let kind = nextKind
        try readAndDiscardValue(checking: check)
        return kind
    }

    /// Reads an object member by member: `body` gets each name and must read its value.
    /// Duplicate names are passed on, in order, for the caller to report.
    mutating func forEachMember(_ body: (String, inout JSONParser) throws -> Void) throws {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else {
            throw error("unexpected \(describeByte()); expected an object")
        }
        try enter()
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of the document inside an object") }
            guard bytes[index] == UInt8(ascii: "\"") else {
                throw error("unexpected \(describeByte()); expected a member name in quotes")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("unexpected \(describeByte()); expected ':' after member name \"\(key.prefix(40))\"")
            }
            index += 1
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of the document") }
            try body(key, &self)
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of the document inside an object") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; break }
            throw error("unexpected \(describeByte()); expected ',' or '}' in an object")
        }
        depth -= 1
    }

    /// Reads an array element by element: `body` gets each index and must read the element.
    mutating func forEachElement(_ body: (Int, inout JSONParser) throws -> Void) throws {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: "[") else {
            throw error("unexpected \(describeByte()); expected an array")
        }
        try enter()
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return
        }
        var position = 0
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of the document inside an array") }
            try body(position, &self)
            position += 1
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of the document inside an array") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; break }
            throw error("unexpected \(describeByte()); expected ',' or ']' in an array")
        }
        depth -= 1
    }

    /// The value of the top-level member `name` (its first occurrence), found by a quick scan
    /// that builds nothing else; nil if the document is not an object, has no such member, or
    /// is malformed before it (the strict read reports that). Sync uses it to learn a page's
    /// `next` link before reading the page record by record inside the write transaction.
    static func topLevelMember(_ name: String, in data: Data) -> JSONValue? {
        let wanted = Array(name.utf8)
        return data.withUnsafeBytes { raw -> JSONValue? in
            let bytes = raw.bindMemory(to: UInt8.self)
            let count = bytes.count
            var index = 0
            if count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
            var depth = 0
            var expectingName = false
            while index < count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: "\""):
                    let start = index + 1
                    // The closing quote: the next quote not escaped, that is, not preceded by an
                    // odd run of backslashes. memchr jumps over the text between quotes.
                    var end = start
                    while true {
                        guard end < count, let found = memchr(bytes.baseAddress! + end, Int32(UInt8(ascii: "\"")), count - end)
                        else { return nil }
                        end = bytes.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                        var backslashes = 0
                        while end - backslashes - 1 >= start, bytes[end - backslashes - 1] == UInt8(ascii: "\\") {
                            backslashes += 1
                        }
                        if backslashes % 2 == 0 { break }
                        end += 1
                    }
                    index = end
                    index += 1
                    guard depth == 1, expectingName else { continue }
                    expectingName = false
                    guard end - start == wanted.count,
                        UnsafeBufferPointer(rebasing: bytes[start..<end]).elementsEqual(wanted)
                    else { continue }
                    var parser = JSONParser(bytes: bytes, maximumDepth: defaultMaximumDepth)
                    parser.index = index
                    parser.skipWhitespace()
                    guard parser.index < count, bytes[parser.index] == UInt8(ascii: ":") else { return nil }
                    parser.index += 1
                    return try? parser.readValue()
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    expectingName = depth == 1 && byte == UInt8(ascii: "{")
                    index += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    index += 1
                    if depth <= 0 { return nil }
                case UInt8(ascii: ","):
                    expectingName = depth == 1
                    index += 1
                default:
                    index += 1
                }
            }
            return nil
        }
    }

    private mutating func parseDocument() throws -> JSONValue {
        // A UTF-8 byte order mark is tolerated (RFC 8259 section 8.1 allows ignoring it).
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        skipWhitespace()
        guard index < bytes.count else { throw error("the document is empty") }
        let value = try readValue()
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected \(describeByte()) after the end of the document") }
        return value
    }

    private mutating func parseValue() throws -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of the document") }
        valuesLeft -= 1
        if valuesLeft < 0 { throw JSONValueLimitError(limit: maximumValues, offset: offset) }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected \(describeByte()); expected a value")
        }
    }

    private mutating func enter() throws {
        depth += 1
        if depth > maximumDepth { throw error("nesting is deeper than \(maximumDepth) levels") }
    }

    private mutating func parseObject() throws -> JSONValue {
        // The members go to this depth's buffer (nested objects use deeper ones), and the
        // object is one allocation of its exact size: an order's item of 4 members took 352
        // bytes when each object reserved room for 8.
        let level = depth
        if memberBuffers.count <= level {
            memberBuffers.append(contentsOf: repeatElement([], count: level + 1 - memberBuffers.count))
        }
        memberBuffers[level].removeAll(keepingCapacity: true)
        try forEachMember { key, parser in
            let value = try parser.parseValue()
            parser.memberBuffers[level].append(JSONMember(key, value))
        }
        let buffer = memberBuffers[level]
        guard !buffer.isEmpty else { return .object([]) }
        // A copy at its size (`Array(buffer[...])` would share the buffer: a slice of a whole
        // array converts without copying).
        let members = [JSONMember](unsafeUninitializedCapacity: buffer.count) { target, count in
            count = target.initialize(fromContentsOf: buffer)
        }
        return .object(members)
    }

    private mutating func parseArray() throws -> JSONValue {
        var elements: [JSONValue] = []
        try forEachElement { _, parser in elements.append(try parser.parseValue()) }
        return .array(elements)
    }

    private mutating func parseString() throws -> String {
        let start = index
        index += 1
        // Fast path: no escapes. Scan to the closing quote, then validate the UTF-8 once.
        var scan = index
        var hasEscape = false
        var high: UInt8 = 0
        // Eight bytes at a time while none can end the fast path: a quote, a backslash, a
        // control character or a non-ASCII byte (then the byte loop below looks at them one by
        // one, from the start of that word). Each test is exact about whether any byte matches.
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        if let base = bytes.baseAddress {
            while scan + 8 <= bytes.count {
                let word = UnsafeRawPointer(base + scan).loadUnaligned(as: UInt64.self)
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let special =
                    (word | ((word &- ones &* 0x20) & ~word) | ((quote &- ones) & ~quote)
                        | ((backslash &- ones) & ~backslash)) & highBits
                if special != 0 { break }
                scan += 8
            }
        }
        while scan < bytes.count {
            let byte = bytes[scan]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") { hasEscape = true; break }
            if byte < 0x20 {
                index = scan
                throw error("unescaped control character U+\(String(format: "%04X", byte)) in a string")
            }
            high |= byte
            scan += 1
        }
        guard scan < bytes.count else {
            index = start
            throw error("a string is not closed")
        }
        if !hasEscape && high < 0x80 {
            // ASCII is valid UTF-8: skip the generic validating initializer, which is not
            // specialized and showed up in profiles of large feeds.
            let string = String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<scan]), as: UTF8.self)
            index = scan + 1
            return string
        }
        if !hasEscape {
            guard let string = String(validating: UnsafeBufferPointer(rebasing: bytes[index..<scan]), as: UTF8.self) else {
                index = firstInvalidUTF8(from: index, to: scan)
                throw error("invalid UTF-8 in a string")
            }
            index = scan + 1
            return string
        }
        return try parseEscapedString(from: index)
    }

    private mutating func parseEscapedString(from begin: Int) throws -> String {
        var buffer: [UInt8] = []
        var segmentStart = begin
        index = begin
        while true {
            guard index < bytes.count else { throw error("a string is not closed") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                buffer.append(contentsOf: bytes[segmentStart..<index])
                index += 1
                break
            }
            if byte < 0x20 { throw error("unescaped control character U+\(String(format: "%04X", byte)) in a string") }
            if byte != UInt8(ascii: "\\") { index += 1; continue }
            buffer.append(contentsOf: bytes[segmentStart..<index])
            index += 1
            guard index < bytes.count else { throw error("a string is not closed") }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""): buffer.append(0x22)
            case UInt8(ascii: "\\"): buffer.append(0x5C)
            case UInt8(ascii: "/"): buffer.append(0x2F)
            case UInt8(ascii: "b"): buffer.append(0x08)
            case UInt8(ascii: "f"): buffer.append(0x0C)
            case UInt8(ascii: "n"): buffer.append(0x0A)
            case UInt8(ascii: "r"): buffer.append(0x0D)
            case UInt8(ascii: "t"): buffer.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try parseHex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                    else {
                        throw error("a lone surrogate \\u\(String(format: "%04X", scalar)) is not a character")
                    }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw error("a lone surrogate \\u\(String(format: "%04X", scalar)) is not a character")
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw error("a lone surrogate \\u\(String(format: "%04X", scalar)) is not a character")
                }
                buffer.append(contentsOf: String(Unicode.Scalar(scalar)!).utf8)
            default:
                index -= 1
                throw error("invalid escape \\\(describeByte())")
            }
            segmentStart = index
        }
        guard let string = String(validating: buffer, as: UTF8.self) else {
            throw error("invalid UTF-8 in a string")
        }
        return string
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("\\u needs four hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - 48
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - 87
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - 55
            default: throw error("\\u needs four hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func parseNumber() throws -> String {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("a number needs digits") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("a number cannot have a leading zero") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("a number needs digits after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("a number needs digits in its exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        guard index + count <= bytes.count, bytes[index..<(index + count)].elementsEqual(expected) else {
            throw error("unexpected \(describeByte()); expected a value")
        }
        index += count
    }

    private mutating func skipWhitespace() {
        while true {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
            // Reading a file in chunks, the window ends only between records: move it on.
            guard reader != nil, refill() else { return }
        }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// The offset of the first byte that is not valid UTF-8 in `start..<end` (linear time).
    private func firstInvalidUTF8(from start: Int, to end: Int) -> Int {
        var iterator = UnsafeBufferPointer(rebasing: bytes[start..<end]).makeIterator()
        var decoder = UTF8()
        var position = start
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): position += UTF8.width(scalar)
            case .emptyInput, .error: return position
            }
        }
    }

    private func describeByte() -> String {
        guard index < bytes.count else { return "end of the document" }
        let byte = bytes[index]
        if byte >= 0x21 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(format: "%02X", byte))"
    }

    private func error(_ message: String) -> JSONParseError {
        // Positions in the whole document: a chunk reader counted the lines it dropped.
        let base = reader?.base ?? 0
        var line = 1 + (reader?.linesBefore ?? 0)
        var lineStart = reader?.lineStart ?? 0
        let end = min(index, bytes.count)
        for position in 0..<end where bytes[position] == 0x0A {
            line += 1
            lineStart = base + position + 1
        }
        return JSONParseError(message: message, offset: base + index, line: line, column: base + end - lineStart + 1)
    }
}
