/// A JSON document as parsed or about to be written. Numbers keep their exact text, so money
/// is never rounded through binary floating point; objects keep their members in order (and
/// duplicates, so the validator can report them).
public enum JSONValue: Sendable, Equatable {
    /// The literal `null`.
    case null
    /// The literal `true` or `false`.
    case bool(Bool)
    /// The number's text as it appears in the document (`2.49`, `1e3`).
    case number(String)
    /// A string, unescaped (the writer escapes it again).
    case string(String)
    /// An array's elements, in order.
    case array([JSONValue])
    /// An object's members in document order, duplicates included (`subscript(_:)` finds the
    /// first; the writer writes them all, as given).
    case object([JSONMember])

    /// The value of the first member named `key`, if this is an object that has one.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The first `.number` whose text is not a JSON number (RFC 8259, section 6: `inf`, `1.`,
    /// `+1`, `0x10`, `1e`), with its path below `path`; nil if there is none.
    func firstInvalidNumber(at path: String) -> (path: String, text: String)? {
        switch self {
        case .number(let text): return Self.isJSONNumber(text) ? nil : (path, text)
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let found = element.firstInvalidNumber(at: "\(path)[\(index)]") { return found }
            }
        case .object(let members):
            for member in members {
                if let found = member.value.firstInvalidNumber(at: path.isEmpty ? member.key : "\(path).\(member.key)") {
                    return found
                }
            }
        case .null, .bool, .string: break
        }
        return nil
    }

    /// Whether `text` is a JSON number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isJSONNumber(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        func digits() -> Int {
            var count = 0
            while let byte = bytes.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                bytes.removeFirst()
                count += 1
            }
            return count
        }
        if bytes.first == UInt8(ascii: "-") { bytes.removeFirst() }
        if bytes.first == UInt8(ascii: "0") {
            bytes.removeFirst()
        } else if digits() == 0 {
            return false
        }
        if bytes.first == UInt8(ascii: ".") {
            bytes.removeFirst()
            if digits() == 0 { return false }
        }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes.removeFirst()
            if bytes.first == UInt8(ascii: "+") || bytes.first == UInt8(ascii: "-") { bytes.removeFirst() }
            if digits() == 0 { return false }
        }
        return bytes.isEmpty
    }

    /// How many values this one holds inside it, at any depth (itself not counted), counting
    /// no further than `limit`: what `JSONParser` counts against its limit when it reads an
    /// object's members.
    func innerValueCount(upTo limit: Int) -> Int {
        var count = 0
        func visit(_ value: JSONValue) {
            switch value {
            case .array(let elements):
                for element in elements where count < limit {
                    count += 1
                    visit(element)
                }
            case .object(let members):
                for member in members where count < limit {
                    count += 1
                    visit(member.value)
                }
            case .null, .bool, .number, .string: break
            }
        }
        visit(self)
        return count
    }

    /// About the bytes `JSONWriter(pretty: false)` writes for the value: exact for strings that
    /// need no escaping (an escaped character takes more). Cheap: a string's UTF-8 count is
    /// known without reading it, so an image's megabytes of base64 cost one step.
    var estimatedSize: Int {
        switch self {
        case .null: 4
        case .bool(let value): value ? 4 : 5
        case .number(let text): text.utf8.count
        case .string(let text): text.utf8.count + 2
        case .array(let elements): elements.reduce(elements.count + 1) { $0 + $1.estimatedSize }
        case .object(let members): members.reduce(members.count + 1) { $0 + $1.key.utf8.count + 3 + $1.value.estimatedSize }
        }
    }

    /// "a string", "a number", ... for error messages.
    package var typeDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// One member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    /// The member's name, unescaped.
    public var key: String
    /// The member's value.
    public var value: JSONValue

    /// The member `key: value`.
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}

extension JSONValue {
    /// An object from members in order.
    public static func object(_ members: KeyValuePairs<String, JSONValue>) -> JSONValue {
        .object(members.map { JSONMember($0.key, $0.value) })
    }

    /// A number written as the integer's decimal digits (exact for any width, `-9223372036854775808`
    /// included).
    public static func integer(_ value: some BinaryInteger) -> JSONValue { .number(String(value)) }
}
