import Testing

@testable import Store

/// `JSONObjectWriter`, with `JSONArrayWriter`s for the members written in pieces, writes the bytes
/// `JSONWriter` gives the whole object: a document written in pieces (a sync report of any
/// length) is the one written whole, in either layout.
@Suite("JSON objects written in pieces")
struct JSONObjectWriterTests {
    /// A key or string that only escaping keeps valid JSON.
    static let escaped = "\"quoted\" é\n\u{01}"

    @Test(
        "JSONObjectWriter's pieces, with arrays written in pieces as members, are JSONWriter's object",
        arguments: [true, false], [0, 1, 3])
    func objectPiecesMatchTheWholeObject(pretty: Bool, count: Int) {
        let writer = JSONWriter(pretty: pretty)
        let elements: [JSONValue] = (0..<count).map { index in
            .object([
                "id": .string("r\(index) \(Self.escaped)"), "list": .array(index == 1 ? [] : [.null, .object([:])]),
            ])
        }
        var members = [JSONMember("first", .integer(count))]
        var object = JSONObjectWriter(writer)
        var pieces = object.member("first", .integer(count))
        for key in ["list", "again \(Self.escaped)"] {
            members.append(JSONMember(key, .array(elements)))
            pieces += object.key(key)
            var array = JSONArrayWriter(writer, depth: 1)
            for element in elements { pieces += array.element(element) }
            pieces += array.end()
        }
        members.append(JSONMember("last", .object(["nested": .array(elements)])))
        pieces += object.member("last", .object(["nested": .array(elements)]))
        pieces += object.end()
        #expect(pieces == writer.string(.object(members)))

        // An object of no members, as JSONWriter writes it.
        #expect(JSONObjectWriter(writer).end() == writer.string(.object([])))
    }
}
