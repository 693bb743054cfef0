import Foundation

/// One feed object being read by a kind's `decode`: each accessor returns the field's value, or
/// nil after reporting the problem with its JSON path (`reminders[3].title`).
///
/// The validator reads an object's members straight from the parser into one buffer it reuses
/// for every record of the feed (a string member is its text, not a tree), checks them for
/// duplicates, and hands the buffer to the kind. Paths are formatted only when a problem is
/// reported, never for the records that have none.
public struct FeedFields {
    /// The object's members, in document order (duplicates are reported before the kind reads them).
    private(set) var members: [JSONMember] = []
    /// The array holding the object (`reminders`) and its index in it; for a nested object
    /// (an order's item), the array member of the parent object (`items`) and the parent's place.
    private var base: String
    private var index: Int
    private var parent: (base: String, index: Int)?
    /// Where the next lookup starts: fields are usually read in the order the feed writes them.
    private var hint = 0
    /// Problems found so far: JSON path and message, the first `keptProblems` of them.
    private(set) var problems: [(path: String, message: String)] = []
    /// How many problems were found, the ones not kept in `problems` included.
    private(set) var problemCount = 0
    /// The most problems kept with their text: no more than the feed's error lists
    /// (`FeedValidator.maximumProblems`). The others are only counted: an order of 100,000
    /// items can report 400,000 problems, which took 80 MB (and a record of a million repeated
    /// members 55 MB) to keep, for the validator to drop all but a hundred.
    static let keptProblems = FeedValidator.maximumProblems
    /// The record's key, once the validator has read and checked it.
    var key = ""
    /// The page the object comes from, which relative URLs resolve against.
    var pageURL: URL
    /// A local feed's folder (its first page's): the only place its files may be read from.
    var localFolder: URL?

    init(base: String = "", index: Int = 0, pageURL: URL, localFolder: URL? = nil) {
        self.base = base
        self.index = index
        self.pageURL = pageURL
        self.localFolder = localFolder
    }

    /// The object's members, as one JSON object.
    public var value: JSONValue { .object(members) }

    /// The object's JSON path: `reminders[3]`.
    public var path: String {
        if let parent { return "\(parent.base)[\(parent.index)].\(base)[\(index)]" }
        return base.isEmpty ? "" : "\(base)[\(index)]"
    }

    /// Whether the object has a member `name` (null included).
    public func has(_ name: String) -> Bool { position(of: name) != nil }

    /// Whether the object has a member `name` that is not null: an optional field given.
    func hasValue(_ name: String) -> Bool {
        guard let found = position(of: name) else { return false }
        return members[found].value != .null
    }

    /// Reports a problem with field `name` (or with the whole object when `name` is empty).
    public mutating func problem(_ name: String, _ message: String) {
        problemCount += 1
        guard problems.count < Self.keptProblems else { return }
        let path = path
        problems.append((name.isEmpty ? path : path.isEmpty ? name : "\(path).\(name)", message))
    }

    /// A required string.
    public mutating func string(_ name: String) -> String? {
        switch member(name) {
        case .string(let text)?: return text
        case nil: problem(name, "is required (a string)")
        case let other?: problem(name, "expected a string, found \(Self.describe(other))")
        }
        return nil
    }

    /// An optional string: nil when absent or null; `valid` is false when a problem was reported.
    public mutating func optionalString(_ name: String) -> (value: String?, valid: Bool) {
        switch member(name) {
        case nil, .null?: return (nil, true)
        case .string(let text)?: return (text, true)
        case let other?:
            problem(name, "expected a string, found \(other.typeDescription)")
            return (nil, false)
        }
    }

    /// A required boolean.
    public mutating func bool(_ name: String) -> Bool? {
        switch member(name) {
        case .bool(let flag)?: return flag
        case nil: problem(name, "is required (true or false)")
        case let other?: problem(name, "expected true or false, found \(Self.describe(other))")
        }
        return nil
    }

    /// A required integer within `range`.
    public mutating func integer(_ name: String, in range: ClosedRange<Int> = Int.min...Int.max) -> Int? {
        switch member(name) {
        case .number(let text)?:
            if let number = Int(text), range.contains(number) { return number }
            problem(name, "\(text.prefix(40)) is not an integer from \(range.lowerBound) to \(range.upperBound)")
        case nil: problem(name, "is required (an integer)")
        case let other?: problem(name, "expected an integer, found \(Self.describe(other))")
        }
        return nil
    }

    /// An integer of at least `minimum` and at most `maximum`: nil when absent (a problem if
    /// `required`) or invalid (a problem).
    mutating func integer(_ name: String, minimum: Int, maximum: Int = .max, required: Bool) -> Int? {
        switch member(name) {
        case nil:
            if required { problem(name, "is required (an integer of at least \(minimum))") }
        case .null? where !required: break
        case .number(let text)?:
            let number = Int(text)
            if let number, number >= minimum, number <= maximum { return number }
            let digitsOnly = !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            if number.map({ $0 > maximum }) ?? digitsOnly {
                problem(name, "\(text.prefix(40)) is too large: at most \(maximum)")
                return nil
            }
            problem(name, "\(text.prefix(40)) is not an integer of at least \(minimum)")
        case let other?: problem(name, "expected an integer, found \(Self.describe(other))")
        }
        return nil
    }

    /// A required calendar date, `YYYY-MM-DD`.
    public mutating func calendarDate(_ name: String) -> CalendarDate? {
        guard let text = string(name) else { return nil }
        guard let date = CalendarDate(text) else {
            problem(name, "\(Self.quote(text)) is not a calendar date (YYYY-MM-DD, a day that exists)")
            return nil
        }
        return date
    }

    /// The value of the first member `name`, if any.
    mutating func member(_ name: String) -> JSONValue? {
        guard let found = position(of: name) else { return nil }
        hint = found + 1
        return members[found].value
    }

    /// The first member named `name` (byte for byte), looked for from the hint on first.
    private func position(of name: String) -> Int? {
        let count = members.count
        var index = hint < count ? hint : 0
        for _ in 0..<count {
            if Self.sameBytes(members[index].key, name) { return first(name, atOrBefore: index) }
            index = index + 1 == count ? 0 : index + 1
        }
        return nil
    }

    /// The first of the members named `name`, `found` being one (duplicates are rare: reported
    /// already, but the first one counts, as it always has).
    private func first(_ name: String, atOrBefore found: Int) -> Int {
        guard hasDuplicates else { return found }
        return members.firstIndex { Self.sameBytes($0.key, name) } ?? found
    }

    private var hasDuplicates = false

    // MARK: Reading (the validator's)

    /// Starts the object at `index` of the array `base`: no members, no problems.
    mutating func start(base: String, index: Int) {
        self.base = base
        self.index = index
        members.removeAll(keepingCapacity: true)
        problems.removeAll()
        problemCount = 0
        hint = 0
        hasDuplicates = false
        key = ""
    }

    /// An object nested in this one's array member `name` at `index` (an order's item): the
    /// same page, its own members and problems.
    func nested(_ members: [JSONMember], in name: String, at index: Int) -> FeedFields {
        var fields = FeedFields(base: name, index: index, pageURL: pageURL, localFolder: localFolder)
        fields.parent = (base, self.index)
        fields.members = members
        fields.hasDuplicates = true
        fields.reportDuplicates()
        return fields
    }

    /// Forgets the problems reported so far (the validator has taken them).
    mutating func clearProblems() {
        problems.removeAll(keepingCapacity: true)
        problemCount = 0
    }

    /// Takes the problems a nested object reported (its count, and its texts while fewer than
    /// `keptProblems` are kept).
    mutating func absorb(_ nested: FeedFields) {
        problems += nested.problems.prefix(Self.keptProblems - problems.count)
        problemCount += nested.problemCount
    }

    /// Reads the object's members from `parser` (which must be at an object) into the buffer,
    /// reporting each repeated member. The members' values share the parser's limit on values
    /// (`JSONParser.maximumValues`, a million unless set): a record over it is not built, and
    /// the `JSONValueLimitError` thrown names the record and the member it was reading.
    mutating func read(_ parser: inout JSONParser) throws {
        var allowance = parser.maximumValues
        try parser.forEachMember { name, parser in
            do {
                members.append(JSONMember(name, try parser.readValue(allowance: &allowance)))
            } catch var error as JSONValueLimitError {
                error.path = path
                error.member = name
                throw error
            }
        }
        reportDuplicates()
    }

    private mutating func reportDuplicates() {
        let count = members.count
        guard count > 1 else { return }
        var found = false
        // Records have a handful of members: comparing pairs beats building a set.
        if count <= 16 {
            for index in 1..<count {
                let key = members[index].key
                if members[..<index].contains(where: { Self.sameBytes($0.key, key) }) {
                    problem("", "the member \(Self.quote(key)) appears more than once")
                    found = true
                }
            }
        } else {
            var names = Set<ExactKey>()
            for member in members where !names.insert(ExactKey(member.key)).inserted {
                problem("", "the member \(Self.quote(member.key)) appears more than once")
                found = true
            }
        }
        hasDuplicates = found
    }

    // MARK: Describing

    /// Byte equality, the length first (O(1) for native strings).
    static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && compareBytes(lhs, rhs) == 0
    }

    /// The order of two keys' UTF-8 bytes (as SQLite's BINARY collation orders them): negative,
    /// zero or positive.
    static func compareBytes(_ lhs: String, _ rhs: String) -> Int {
        let compared = lhs.utf8.withContiguousStorageIfAvailable { left in
            rhs.utf8.withContiguousStorageIfAvailable { right -> Int in
                let common = min(left.count, right.count)
                if common > 0 {
                    let order = memcmp(left.baseAddress!, right.baseAddress!, common)
                    if order != 0 { return Int(order) }
                }
                return left.count - right.count
            }
        }
        if let order = compared ?? nil { return order }
        return lhs.utf8.lexicographicallyPrecedes(rhs.utf8) ? -1 : lhs.utf8.elementsEqual(rhs.utf8) ? 0 : 1
    }

    /// A value as a problem names it: `the number 3`, `the string 'x'`, `an array`.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .number(let text): "the number \(text.prefix(40))"
        case .string(let text): "the string \(quote(text))"
        case .bool(let flag): String(flag)
        default: value.typeDescription
        }
    }

    /// A text as a problem quotes it: in single quotes, clipped to 60 characters.
    static func quote(_ text: String) -> String {
        let clipped =
            text.unicodeScalars.count > 60 ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(60))) + "…" : text
        return "'\(clipped)'"
    }
}
