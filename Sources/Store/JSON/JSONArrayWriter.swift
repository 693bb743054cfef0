/// A JSON array written one element at a time, for a document too large to hold as one
/// `JSONValue` (`storectl frameworks list --json` over a million records, say).
///
/// The pieces it returns, concatenated, are exactly the text `JSONWriter.string(.array(elements))`
/// gives for the same elements in the same layout: `element(_:)` for each element in order, then
/// `end()`. Nothing is kept between calls but whether an element was written. An array that is
/// a member's value in a larger document (`JSONObjectWriter.key(_:)`) is written at that
/// member's `depth`, so its lines are indented as the whole document's would be.
///
/// ```swift
/// var array = JSONArrayWriter()
/// let output = FileHandle.standardOutput
/// for framework in frameworks { output.write(Data(array.element(framework.jsonValue).utf8)) }
/// output.write(Data(array.end().utf8))
/// ```
public struct JSONArrayWriter: Sendable {
    private var pieces: JSONContainerPieces

    /// An array in `writer`'s layout (pretty by default), nested `depth` levels deep: 0 for a
    /// document of its own, 1 for a member of the top-level object, and so on.
    public init(_ writer: JSONWriter = JSONWriter(), depth: Int = 0) {
        pieces = JSONContainerPieces(writer, depth: depth, opening: "[", closing: "]")
    }

    /// The text of the next element, with what comes before it: the opening bracket before the
    /// first, a comma before each later one, and (pretty) the newline and indentation.
    public mutating func element(_ value: JSONValue) -> String {
        var out = pieces.beforeItem()
        pieces.writer.write(value, into: &out, indent: pieces.depth + 1)
        return out
    }

    /// The text that closes the array: `[]` when no element was written, else (pretty) a
    /// newline and the closing bracket. Without a final newline, as `JSONWriter.string`.
    public func end() -> String { pieces.end() }
}
