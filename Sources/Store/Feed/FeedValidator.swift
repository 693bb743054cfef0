import Foundation

/// Checks feed pages against FEED.md and builds the merged `Feed`, collecting every problem
/// with its JSON path instead of stopping at the first.
///
/// Feed pages one at a time with `add(_:source:pageURL:)`; ids must be unique per kind across
/// all pages. `finish()` returns the feed or throws `FeedValidationError`.
struct FeedValidator {
    static let maximumProblems = 100

    private(set) var feed = Feed()
    private var problems: [FeedProblem] = []
    private var problemCount = 0
    /// Where each key was first seen, per kind: for duplicate reports. Keyed by the exact
    /// UTF-8 bytes, as SQLite compares keys: Swift's `String ==` treats canonically equivalent
    /// strings ("é" and "e\u{301}") as equal, yet they are two distinct records in the store.
    private var seen: [RecordKind: [ExactKey: String]] = [:]
    private var tombstoned: [RecordKind: [ExactKey: String]] = [:]
    private var source = ""

    /// Validates one page and returns its `next` link, if any (unresolved).
    mutating func add(_ document: JSONValue, source: String, pageURL: URL) -> String? {
        self.source = source
        guard case .object(let members) = document else {
            problem("", "the top level must be an object, found \(document.typeDescription)")
            return nil
        }
        checkDuplicateMembers(members, at: "")
        switch document["version"] {
        case nil: problem("version", "is required (the integer 1)")
        case .number("1")?: break
        case let value?: problem("version", "must be 1, found \(describe(value)); this build reads version 1 only")
        }
        for (index, element) in array(document, "frameworks").enumerated() {
            if let framework = framework(element, at: "frameworks[\(index)]") { feed.frameworks.append(framework) }
        }
        for (index, element) in array(document, "orders").enumerated() {
            if let order = order(element, at: "orders[\(index)]") { feed.orders.append(order) }
        }
        for (index, element) in array(document, "events").enumerated() {
            if let event = event(element, at: "events[\(index)]") { feed.events.append(event) }
        }
        for (index, element) in array(document, "images").enumerated() {
            if let image = image(element, at: "images[\(index)]", pageURL: pageURL) { feed.images.append(image) }
        }
        tombstones(document["deleted"], pageURL: pageURL)
        switch document["next"] {
        case nil, .null?: return nil
        case .string(let next)?: return next
        case let value?:
            problem("next", "expected a string (a URL), found \(value.typeDescription)")
            return nil
        }
    }

    /// Records a problem found outside the document (a `next` link that loops, say).
    mutating func report(source: String, path: String, message: String) {
        self.source = source
        problem(path, message)
    }

    var hasProblems: Bool { problemCount > 0 }

    func finish() throws -> Feed {
        if problemCount > 0 { throw FeedValidationError(problems: problems, totalCount: problemCount) }
        return feed
    }

    // MARK: Records

    private mutating func framework(_ value: JSONValue, at path: String) -> Framework? {
        guard let members = object(value, at: path) else { return nil }
        let id = identifier(value, at: path, kind: .framework)
        let name = string(value, "name", at: path)
        let imageName = string(value, "imageName", at: path)
        let urlString = string(value, "urlString", at: path)
        let description = string(value, "description", at: path)
        checkDuplicateMembers(members, at: path)
        guard let id, let name, let imageName, let urlString, let description else { return nil }
        return Framework(id: id, name: name, imageName: imageName, urlString: urlString, description: description)
    }

    private mutating func order(_ value: JSONValue, at path: String) -> Order? {
        guard let members = object(value, at: path) else { return nil }
        checkDuplicateMembers(members, at: path)
        let id = identifier(value, at: path, kind: .order)
        var placedAt: Date?
        if let text = string(value, "placedAt", at: path) {
            placedAt = Timestamp.parse(text)
            if placedAt == nil { problem(path + ".placedAt", "\(quote(text)) is not an RFC 3339 timestamp such as 2026-11-20T09:30:00Z") }
        }
        var items: [OrderItem]? = nil
        switch value["items"] {
        case nil: problem(path + ".items", "is required (at least one item)")
        case .array(let elements)?:
            if elements.isEmpty { problem(path + ".items", "must hold at least one item") }
            var parsed: [OrderItem] = []
            var valid = true
            for (index, element) in elements.enumerated() {
                if let item = item(element, at: "\(path).items[\(index)]") { parsed.append(item) } else { valid = false }
            }
            if valid && !elements.isEmpty { items = parsed }
        case let other?: problem(path + ".items", "expected an array, found \(other.typeDescription)")
        }
        guard let id, let placedAt, let items else { return nil }
        return Order(id: id, placedAt: placedAt, items: items)
    }

    private mutating func item(_ value: JSONValue, at path: String) -> OrderItem? {
        guard let members = object(value, at: path) else { return nil }
        checkDuplicateMembers(members, at: path)
        let name = string(value, "itemName", at: path)
        var price: Money?
        switch value["price"] {
        case nil: problem(path + ".price", "is required")
        case .number(let text)?:
            price = Money.parseCents(text).map(Money.init(minorUnits:))
            if price == nil {
                problem(path + ".price", "\(text) is not an amount of money: at least 0, at most 2 fraction digits")
            }
        case let other?: problem(path + ".price", "expected a number, found \(describe(other))")
        }
        let aisle = integer(value, "aisle", at: path, minimum: 0, required: true)
        let quantity = integer(value, "quantity", at: path, minimum: 1, required: false)
        guard let name, let price, let aisle else { return nil }
        if value["quantity"] != nil && quantity == nil { return nil }
        return OrderItem(itemName: name, price: price, aisle: aisle, quantity: quantity ?? 1)
    }

    private mutating func event(_ value: JSONValue, at path: String) -> Event? {
        guard let members = object(value, at: path) else { return nil }
        checkDuplicateMembers(members, at: path)
        let id = identifier(value, at: path, kind: .event)
        let title = string(value, "title", at: path)
        var date: CalendarDate?
        if let text = string(value, "date", at: path) {
            date = CalendarDate(text)
            if date == nil { problem(path + ".date", "\(quote(text)) is not a calendar date (YYYY-MM-DD, a day that exists)") }
        }
        var notes: String?
        switch value["notes"] {
        case nil, .null?: break
        case .string(let text)?: notes = text
        case let other?: problem(path + ".notes", "expected a string, found \(other.typeDescription)")
        }
        guard let id, let title, let date else { return nil }
        return Event(id: id, title: title, date: date, notes: notes)
    }

    private mutating func image(_ value: JSONValue, at path: String, pageURL: URL) -> FeedImage? {
        guard let members = object(value, at: path) else { return nil }
        checkDuplicateMembers(members, at: path)
        guard let text = string(value, "url", at: path) else { return nil }
        guard let url = resolveImageURL(text, at: path + ".url", pageURL: pageURL) else { return nil }
        let location = URL(string: text, relativeTo: pageURL)?.absoluteURL
        var data: Data?
        switch value["data"] {
        case nil, .null?: break
        case .string(let base64)?:
            data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters)
            if data == nil { problem(path + ".data", "is not valid base64") }
        case let other?: problem(path + ".data", "expected a base64 string, found \(other.typeDescription)")
        }
        var contentType: String?
        switch value["contentType"] {
        case nil, .null?: break
        case .string(let text)?: contentType = text
        case let other?: problem(path + ".contentType", "expected a string, found \(other.typeDescription)")
        }
        if value["data"] != nil, value["data"] != .null, data == nil { return nil }
        guard noteKey(url, kind: .image, at: path + ".url") else { return nil }
        var image = FeedImage(url: url, data: data, contentType: contentType)
        image.location = location
        return image
    }

    private mutating func tombstones(_ value: JSONValue?, pageURL: URL) {
        guard let value, value != .null else { return }
        guard case .object(let members) = value else {
            problem("deleted", "expected an object of arrays per kind, found \(value.typeDescription)")
            return
        }
        checkDuplicateMembers(members, at: "deleted")
        for kind in RecordKind.allCases {
            let path = "deleted.\(kind.plural)"
            switch value[kind.plural] {
            case nil, .null?: continue
            case .array(let elements)?:
                for (index, element) in elements.enumerated() {
                    let elementPath = "\(path)[\(index)]"
                    guard case .string(var key) = element else {
                        problem(elementPath, "expected a string (\(kind.keyField)), found \(element.typeDescription)")
                        continue
                    }
                    if kind == .image {
                        guard let resolved = resolveImageURL(key, at: elementPath, pageURL: pageURL) else { continue }
                        key = resolved
                    } else if let reason = RecordValidation.problem(withID: key) {
                        problem(elementPath, "\(quote(key)) \(reason)")
                        continue
                    }
                    if let first = seen[kind]?[ExactKey(key)] {
                        problem(elementPath, "\(quote(key)) is also in \(first): a record cannot be both sent and deleted")
                    } else if let first = tombstoned[kind]?[ExactKey(key)] {
                        problem(elementPath, "\(quote(key)) is already deleted at \(first)")
                    } else {
                        tombstoned[kind, default: [:]][ExactKey(key)] = "\(source): \(elementPath)"
                        feed.deleted[kind].append(key)
                    }
                }
            case let other?: problem(path, "expected an array, found \(other.typeDescription)")
            }
        }
    }

    // MARK: Fields

    private mutating func identifier(_ value: JSONValue, at path: String, kind: RecordKind) -> String? {
        guard let id = string(value, "id", at: path) else { return nil }
        if let reason = RecordValidation.problem(withID: id) {
            problem(path + ".id", "\(quote(id)) \(reason)")
            return nil
        }
        return noteKey(id, kind: kind, at: path + ".id") ? id : nil
    }

    /// Records that `key` appears at `path`; false (with a problem) if it already appeared.
    private mutating func noteKey(_ key: String, kind: RecordKind, at path: String) -> Bool {
        let location = "\(source): \(path)"
        if let first = seen[kind]?[ExactKey(key)] {
            problem(path, "\(quote(key)) is a duplicate: it already appears at \(first)")
            return false
        }
        if let first = tombstoned[kind]?[ExactKey(key)] {
            problem(path, "\(quote(key)) is also deleted at \(first): a record cannot be both sent and deleted")
            return false
        }
        seen[kind, default: [:]][ExactKey(key)] = location
        return true
    }

    private mutating func string(_ value: JSONValue, _ field: String, at path: String) -> String? {
        switch value[field] {
        case .string(let text)?: return text
        case nil: problem("\(path).\(field)", "is required (a string)")
        case let other?: problem("\(path).\(field)", "expected a string, found \(describe(other))")
        }
        return nil
    }

    private mutating func integer(_ value: JSONValue, _ field: String, at path: String, minimum: Int, required: Bool) -> Int? {
        switch value[field] {
        case nil:
            if required { problem("\(path).\(field)", "is required (an integer of at least \(minimum))") }
        case .number(let text)?:
            if let number = Int(text), number >= minimum { return number }
            problem("\(path).\(field)", "\(text.prefix(40)) is not an integer of at least \(minimum)")
        case let other?: problem("\(path).\(field)", "expected an integer, found \(describe(other))")
        }
        return nil
    }

    private mutating func object(_ value: JSONValue, at path: String) -> [JSONMember]? {
        guard case .object(let members) = value else {
            problem(path, "expected an object, found \(value.typeDescription)")
            return nil
        }
        return members
    }

    private mutating func array(_ document: JSONValue, _ field: String) -> [JSONValue] {
        switch document[field] {
        case nil: return []
        case .array(let elements)?: return elements
        case let other?:
            problem(field, "expected an array, found \(other.typeDescription)")
            return []
        }
    }

    private mutating func checkDuplicateMembers(_ members: [JSONMember], at path: String) {
        guard members.count > 1 else { return }
        // Records have a handful of members: comparing pairs beats building a set.
        if members.count <= 16 {
            for index in 1..<members.count {
                let key = members[index].key
                if members[..<index].contains(where: { $0.key.utf8.elementsEqual(key.utf8) }) {
                    problem(path, "the member \(quote(key)) appears more than once")
                }
            }
            return
        }
        var names = Set<ExactKey>()
        for member in members where !names.insert(ExactKey(member.key)).inserted {
            problem(path, "the member \(quote(member.key)) appears more than once")
        }
    }

    /// An image url: absolute http(s), or relative to the page. Never another scheme, and a
    /// remote page can never name a `file:` URL.
    private mutating func resolveImageURL(_ text: String, at path: String, pageURL: URL) -> String? {
        guard !text.isEmpty, let url = URL(string: text, relativeTo: pageURL)?.absoluteURL, let scheme = url.scheme?.lowercased() else {
            problem(path, "\(quote(text)) is not a URL")
            return nil
        }
        let pageIsFile = pageURL.isFileURL
        let isRelative = URL(string: text)?.scheme == nil
        switch scheme {
        case "http", "https": break
        case "file" where pageIsFile && isRelative: break
        default:
            problem(path, "\(quote(text)) must be an http(s) URL or relative to the feed")
            return nil
        }
        // Relative urls of a local feed stay as written: the key must not depend on where the file lies.
        return pageIsFile && isRelative ? text : url.absoluteString
    }

    // MARK: Reporting

    private mutating func problem(_ path: String, _ message: String) {
        problemCount += 1
        if problems.count < Self.maximumProblems {
            problems.append(FeedProblem(source: source, path: path, message: message))
        }
    }

    private func describe(_ value: JSONValue) -> String {
        switch value {
        case .number(let text): "the number \(text.prefix(40))"
        case .string(let text): "the string \(quote(text))"
        case .bool(let flag): String(flag)
        default: value.typeDescription
        }
    }

    private func quote(_ text: String) -> String {
        let clipped = text.unicodeScalars.count > 60 ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(60))) + "…" : text
        return "'\(clipped)'"
    }
}

/// A key compared byte for byte (UTF-8), as SQLite compares TEXT keys (Swift's `String ==`
/// treats canonically equivalent strings as equal). Hashes the bytes in place, allocating nothing.
private struct ExactKey: Hashable {
    let text: String
    init(_ text: String) { self.text = text }

    static func == (lhs: ExactKey, rhs: ExactKey) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
