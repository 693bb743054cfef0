/// What an array or object written in pieces puts around its items, in a `JSONWriter`'s layout:
/// the opening bracket before the first item, a comma before each later one, (pretty) the
/// newline and indentation before each, and the close. `JSONArrayWriter` and `JSONObjectWriter`
/// each hold one; only the items differ.
struct JSONContainerPieces: Sendable {
    let writer: JSONWriter
    /// How deep the container is nested: 0 for a document of its own.
    let depth: Int
    private let opening: String
    private let closing: String
    private var isEmpty = true

    init(_ writer: JSONWriter, depth: Int, opening: String, closing: String) {
        self.writer = writer
        self.depth = depth
        self.opening = opening
        self.closing = closing
    }

    /// What comes before the next item, which is then written `depth + 1` levels deep.
    mutating func beforeItem() -> String {
        var out = isEmpty ? opening : ","
        isEmpty = false
        writer.newline(&out, depth + 1)
        return out
    }

    /// The close: `[]` or `{}` when no item was written, else (pretty) a newline, the
    /// indentation and the closing bracket. Without a final newline, as `JSONWriter.string`.
    func end() -> String {
        if isEmpty { return opening + closing }
        var out = ""
        writer.newline(&out, depth)
        return out + closing
    }
}
