/// A JSON array written one element at a time, for a document too large to hold as one
/// `JSONValue` (`storectl frameworks list --json` over a million records, say).
///
/// The pieces it returns, concatenated, are exactly the text `JSONWriter.string(.array(elements))`
/// gives for the same elements in the same layout: `element(_:)` for each element in order, then
/// `end()`. Nothing is kept between calls but whether an element was written.
///
/// ```swift
/// var array = JSONArrayWriter()
/// let output = FileHandle.standardOutput
/// for framework in frameworks { output.write(Data(array.element(framework.jsonValue).utf8)) }
/// output.write(Data(array.end().utf8))
/// ```
public struct JSONArrayWriter: Sendable {
    private let writer: JSONWriter
    private var isEmpty = true

    /// An array in `writer`'s layout (pretty by default).
    public init(_ writer: JSONWriter = JSONWriter()) { self.writer = writer }

    /// The text of the next element, with what comes before it: the opening bracket before the
    /// first, a comma before each later one, and (pretty) the newline and indentation.
    public mutating func element(_ value: JSONValue) -> String {
        var out = isEmpty ? "[" : ","
        isEmpty = false
        if writer.pretty { out += "\n  " }
        writer.write(value, into: &out, indent: 1)
        return out
    }

    /// The text that closes the array: `[]` when no element was written, else (pretty) a
    /// newline and the closing bracket. Without a final newline, as `JSONWriter.string`.
    public func end() -> String {
        if isEmpty { return "[]" }
        return writer.pretty ? "\n]" : "]"
    }
}
