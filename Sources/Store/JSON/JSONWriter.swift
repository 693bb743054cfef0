/// Writes JSON deterministically: members in their given order, two-space indentation when
/// pretty, non-ASCII characters as UTF-8, and the same bytes for the same value every time
/// (so an export, synced elsewhere and exported again, is byte-identical).
public struct JSONWriter: Sendable {
    /// True: one member or element per line, indented by two spaces per level, `": "` between
    /// a key and its value. False: the most compact form, with no whitespace at all.
    public var pretty: Bool

    /// A writer in the given layout (pretty by default).
    public init(pretty: Bool = true) { self.pretty = pretty }

    /// The text of `value`, without a final newline. Never fails: every `JSONValue` can be
    /// written (a `.number` is written as its text, which the caller must keep valid JSON).
    public func string(_ value: JSONValue) -> String {
        var out = ""
        write(value, into: &out, indent: 0)
        return out
    }

    /// Appends `value` to `out` at the given indentation depth.
    func write(_ value: JSONValue, into out: inout String, indent: Int) {
        switch value {
        case .null: out += "null"
        case .bool(let bool): out += bool ? "true" : "false"
        case .number(let text): out += text
        case .string(let text): Self.writeString(text, into: &out)
        case .array(let elements):
            guard !elements.isEmpty else { out += "[]"; return }
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += "," }
                newline(&out, indent + 1)
                write(element, into: &out, indent: indent + 1)
            }
            newline(&out, indent)
            out += "]"
        case .object(let members):
            guard !members.isEmpty else { out += "{}"; return }
            out += "{"
            for (index, member) in members.enumerated() {
                if index > 0 { out += "," }
                newline(&out, indent + 1)
                Self.writeString(member.key, into: &out)
                out += pretty ? ": " : ":"
                write(member.value, into: &out, indent: indent + 1)
            }
            newline(&out, indent)
            out += "}"
        }
    }

    /// Pretty: a line break and `indent` levels of indentation. Compact: nothing. (The streamed
    /// writers, `JSONArrayWriter` and `JSONObjectWriter`, lay out their pieces with it too, through
    /// `JSONContainerPieces`.)
    func newline(_ out: inout String, _ indent: Int) {
        guard pretty else { return }
        out += "\n"
        out += String(repeating: "  ", count: indent)
    }

    /// A JSON string literal (RFC 8259 section 7): quotes, backslashes and control characters escaped.
    static func writeString(_ text: String, into out: inout String) {
        if !needsEscaping(text) {
            out += "\""
            out += text
            out += "\""
        } else {
            var bytes: [UInt8] = []
            writeString(text, into: &bytes)
            out += String(decoding: bytes, as: UTF8.self)
        }
    }

    /// The same literal as UTF-8 bytes appended to `out` (the change log writes these).
    static func writeString(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // A native string's bytes in place: scanned, then copied at once when nothing needs
        // escaping (a change log's keys, 100,000 of them in a bulk insert's log, usually).
        let copied: Bool? = text.utf8.withContiguousStorageIfAvailable { bytes in
            for byte in bytes where byte < 0x20 || byte == 0x22 || byte == 0x5C { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true {
            out.append(UInt8(ascii: "\""))
            return
        }
        if copied == nil, !needsEscaping(text) { // bridged, not native: no bytes in place
            out.append(contentsOf: text.utf8)
            out.append(UInt8(ascii: "\""))
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case 0x0A: out.append(contentsOf: #"\n"#.utf8)
            case 0x0D: out.append(contentsOf: #"\r"#.utf8)
            case 0x09: out.append(contentsOf: #"\t"#.utf8)
            case 0x08: out.append(contentsOf: #"\b"#.utf8)
            case 0x0C: out.append(contentsOf: #"\f"#.utf8)
            case ..<0x20:
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            // Bytes of multi-byte characters are all >= 0x80: copied as they are (UTF-8 out).
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func needsEscaping(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
    }
}
