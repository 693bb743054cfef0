/// A JSON object written one member at a time, for a document too large to hold as one
/// `JSONValue` (a sync report listing half a million conflicts, say): its small members are
/// written whole, a large one's value in pieces of its own (a `JSONArrayWriter` one level deeper).
///
/// The pieces it returns, concatenated with those of the values written in pieces, are exactly
/// the text `JSONWriter.string(.object(members))` gives for the same members in the same layout:
/// `member(_:_:)` (or `key(_:)`, then the value's pieces) for each member in order, then `end()`.
/// Nothing is kept between calls but whether a member was written.
///
/// ```swift
/// var object = JSONObjectWriter(writer)
/// write(object.member("status", .string("applied")))
/// write(object.key("conflicts"))
/// var conflicts = JSONArrayWriter(writer, depth: 1)
/// for conflict in report.conflicts { write(conflicts.element(conflict.jsonValue)) }
/// write(conflicts.end())
/// write(object.end())
/// ```
public struct JSONObjectWriter: Sendable {
    private var pieces: JSONContainerPieces

    /// An object in `writer`'s layout (pretty by default), nested `depth` levels deep: 0 for a
    /// document of its own.
    public init(_ writer: JSONWriter = JSONWriter(), depth: Int = 0) {
        pieces = JSONContainerPieces(writer, depth: depth, opening: "{", closing: "}")
    }

    /// The text of the next member, with what comes before it (see `key(_:)`).
    public mutating func member(_ key: String, _ value: JSONValue) -> String {
        var out = self.key(key)
        pieces.writer.write(value, into: &out, indent: pieces.depth + 1)
        return out
    }

    /// The text of the next member up to its value, for a value the caller writes in pieces,
    /// nested `depth + 1` levels deep: the opening brace before the first member, a comma before
    /// each later one, (pretty) the newline and indentation, then the key and its colon.
    public mutating func key(_ key: String) -> String {
        var out = pieces.beforeItem()
        JSONWriter.writeString(key, into: &out)
        out += pieces.writer.pretty ? ": " : ":"
        return out
    }

    /// The text that closes the object: `{}` when no member was written, else (pretty) a
    /// newline, the indentation and the closing brace. Without a final newline, as
    /// `JSONWriter.string`.
    public func end() -> String { pieces.end() }
}
