import Foundation

/// Checks feed pages against <doc:FeedFormat> while reading them record by record, handing each valid
/// record to a `FeedSink` as soon as it is read, and collecting every problem with its JSON
/// path instead of stopping at the first.
///
/// A page is never held as one tree: memory stays near the page's own bytes however many
/// records it holds. Records reach the sink only while no problem has been found; once one is,
/// the rest is still checked (to list every problem) but nothing more is handed on. The caller
/// applies records inside a transaction and rolls it back when `finish()` throws, so an invalid
/// feed leaves nothing behind.
///
/// Feed pages one at a time with `add(_:source:pageURL:into:)`; ids must be unique per kind
/// across all pages. `finish()` throws `FeedValidationError` if anything was wrong.
struct FeedValidator {
    static let maximumProblems = 100

    private var problems: [FeedProblem] = []
    private var problemCount = 0
    /// Where each key was first seen, per kind (indexed by `slot(kind)`): for duplicate reports.
    /// Keyed by the exact UTF-8 bytes, as SQLite compares keys: Swift's `String ==` treats
    /// canonically equivalent strings ("é" and "e\u{301}") as equal, yet they are two distinct
    /// records in the store. Locations are two integers, formatted only for a report.
    private var keys: FeedKeyRegistry
    /// The app kinds this feed may hold besides the built-in ones; slot 4 + index.
    private let recordTypes: [any StoreRecord.Type]
    /// The names of the pages read so far, for locations.
    private var pageNames: [String] = []
    /// A local feed's folder (its first page's): the only place its images may be read from.
    private var localFolder: URL?
    private var source = ""
    /// Records and tombstones read so far, valid or not.
    private(set) var recordCount = 0
    /// Whether `version` 2 is accepted: set for the segments of a published feed (a manifest), never
    /// for a version-1 feed.
    var acceptsSegments = false

    /// `recordTypes`: the app kinds the feed may hold. `keysInMemory`: how many keys are
    /// remembered in memory before the rest go to a temporary database on disk (`FeedKeyRegistry`).
    init(recordTypes: [any StoreRecord.Type] = [], keysInMemory: Int = FeedKeyRegistry.defaultMemoryLimit) {
        self.recordTypes = recordTypes
        keys = FeedKeyRegistry(memoryLimit: keysInMemory, slots: 4 + recordTypes.count)
    }

    /// Reads and checks one page, handing its valid records to `sink` in document order while
    /// the feed has no problem. Throws only what `sink` throws.
    mutating func add<Sink: FeedSink>(_ data: Data, source: String, pageURL: URL, into sink: inout Sink) throws {
        try add(source: source, pageURL: pageURL, into: &sink) { try JSONParser.read(data, $0) }
    }

    /// The same for a page on disk (a local feed, or a download spooled to a file): read in
    /// chunks, so memory stays near one chunk however large the page.
    mutating func add<Sink: FeedSink>(
        file: URL, source: String, pageURL: URL, into sink: inout Sink,
        chunkSize: Int = JSONChunkReader.chunkSize
    ) throws {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: file)
        } catch {
            throw FeedSourceError.unreadable(path: source, reason: FeedLoader.reason(error))
        }
        defer { try? handle.close() }
        let reader = JSONChunkReader(descriptor: handle.fileDescriptor, chunkSize: chunkSize)
        let problemsBefore = problemCount
        try add(source: source, pageURL: pageURL, into: &sink) { try JSONParser.read(reader, $0) }
        // A read error cut the page short: say so, not what the cut made of the JSON.
        if let failure = reader.failure as? FeedSourceError, case .unreadable(_, let reason) = failure {
            if problemCount > problemsBefore, problems.last?.message.hasPrefix("not valid JSON") == true {
                problems.removeLast()
                problemCount -= 1
            }
            throw FeedSourceError.unreadable(path: source, reason: reason)
        }
    }

    private mutating func add<Sink: FeedSink>(
        source: String, pageURL: URL, into sink: inout Sink,
        read: ((inout JSONParser) throws -> Void) throws -> Void
    ) throws {
        self.source = source
        if pageNames.isEmpty, pageURL.isFileURL { localFolder = pageURL.deletingLastPathComponent() }
        pageNames.append(source)
        let page = Int32(pageNames.count - 1)
        var sinkError: (any Error)?
        do {
            try read { parser in
                guard parser.nextKind == .object else {
                    let document = try parser.readValue()
                    problem("", "the top level must be an object, found \(document.typeDescription)")
                    return
                }
                var names: [String] = []
                var hasVersion = false
                try parser.forEachMember { name, parser in
                    if names.contains(where: { Self.sameBytes($0, name) }) {
                        problem("", "the member \(quote(name)) appears more than once")
                        _ = try parser.readValue()
                        return
                    }
                    names.append(name)
                    switch name {
                    case "version":
                        hasVersion = true
                        switch try parser.readValue() {
                        case .number("1"): break
                        // A published feed's segment: version-1 members plus `generation`,
                        // `from` and `to`, which the manifest sync checks.
                        case .number("2") where acceptsSegments: break
                        case let value: problem("version", "must be 1, found \(describe(value)); this build reads version 1 only")
                        }
                    case "frameworks", "orders", "events", "images":
                        guard parser.nextKind == .array else {
                            problem(name, "expected an array, found \(try parser.readValue().typeDescription)")
                            return
                        }
                        let isFrameworks = name == "frameworks"
                        try parser.forEachElement { index, parser in
                            recordCount += 1
                            if isFrameworks {
                                switch try plainFramework(&parser, index: index, page: page) {
                                case .decoded(let framework):
                                    guard problemCount == 0 else { return }
                                    do {
                                        try sink.receive(framework)
                                    } catch {
                                        sinkError = error
                                        throw SinkFailed()
                                    }
                                    return
                                case .invalid: return
                                case .notPlain: break
                                }
                            }
                            let element = try parser.readValue()
                            do {
                                try record(element, arrayName: name, index: index, page: page, pageURL: pageURL, into: &sink)
                            } catch {
                                sinkError = error
                                throw SinkFailed()
                            }
                        }
                    case "deleted":
                        let value = try parser.readValue()
                        do {
                            try tombstones(value, page: page, pageURL: pageURL, into: &sink)
                        } catch {
                            sinkError = error
                            throw SinkFailed()
                        }
                    case "next":
                        switch try parser.readValue() {
                        case .null, .string: break
                        case let value: problem("next", "expected a string (a URL), found \(value.typeDescription)")
                        }
                    case _ where recordTypes.contains(where: { $0.feedKey == name }):
                        guard parser.nextKind == .array else {
                            problem(name, "expected an array, found \(try parser.readValue().typeDescription)")
                            return
                        }
                        let type = recordTypes.first { $0.feedKey == name }!
                        try parser.forEachElement { index, parser in
                            recordCount += 1
                            let element = try parser.readValue()
                            let location = KeyLocation(page: page, index: Int32(truncatingIfNeeded: index), isTombstone: false)
                            guard let record = appRecord(element, type: type, at: "\(name)[\(index)]", location: location),
                                problemCount == 0
                            else { return }
                            do {
                                try sink.receive(record: record)
                            } catch {
                                sinkError = error
                                throw SinkFailed()
                            }
                        }
                    default:
                        // Unknown members are ignored, so newer feeds still load.
                        _ = try parser.readValue()
                    }
                }
                if !hasVersion { problem("version", "is required (the integer 1)") }
            }
        } catch is SinkFailed {
            throw sinkError!
        } catch let error as JSONParseError {
            problem("", "not valid JSON: \(error)")
        }
    }

    /// Stops the read when the sink fails (a disk error, say): its error is rethrown as is.
    private struct SinkFailed: Error {}

    /// What the fast path made of a framework.
    private enum PlainRecord {
        case decoded(Framework)
        /// Read and found invalid; the problem is reported.
        case invalid
        /// Not in the plain shape: the parser is back at its start, for the general path.
        case notPlain
    }

    /// The fast path for the common framework: an object of exactly the five string members,
    /// read straight into a `Framework` without building its tree. Anything else (a missing,
    /// repeated, unknown or non-string member, an invalid id) rewinds the parser and goes the
    /// general way, which reports problems; so both paths accept and refuse the same feeds.
    private mutating func plainFramework(_ parser: inout JSONParser, index: Int, page: Int32) throws -> PlainRecord {
        guard parser.nextKind == .object else { return .notPlain }
        // Kept in memory until the record is read, for the rewind (a file is read in chunks).
        let start = parser.pin()
        defer { parser.unpin() }
        var id, name, imageName, urlString, description: String?
        var plain = true
        try parser.forEachMember { key, parser in
            let value = try parser.readValue()
            guard plain, case .string(let text) = value else {
                plain = false
                return
            }
            switch key {
            case "id" where id == nil: id = text
            case "name" where name == nil: name = text
            case "imageName" where imageName == nil: imageName = text
            case "urlString" where urlString == nil: urlString = text
            case "description" where description == nil: description = text
            default: plain = false
            }
        }
        guard plain, let id, let name, let imageName, let urlString, let description,
            RecordValidation.problem(withID: id) == nil
        else {
            parser.rewind(to: start)
            return .notPlain
        }
        let location = KeyLocation(page: page, index: Int32(truncatingIfNeeded: index), isTombstone: false)
        guard noteKey(id, kind: .framework, at: "frameworks[\(index)].id", location: location) else { return .invalid }
        return .decoded(Framework(id: id, name: name, imageName: imageName, urlString: urlString, description: description))
    }

    private mutating func record<Sink: FeedSink>(
        _ element: JSONValue, arrayName: String, index: Int, page: Int32,
        pageURL: URL, into sink: inout Sink
    ) throws {
        let path = { "\(arrayName)[\(index)]" }
        let location = KeyLocation(page: page, index: Int32(truncatingIfNeeded: index), isTombstone: false)
        switch arrayName {
        case "frameworks":
            if let framework = framework(element, at: path(), location: location), problemCount == 0 {
                try sink.receive(framework)
            }
        case "orders":
            if let order = order(element, at: path(), location: location), problemCount == 0 { try sink.receive(order) }
        case "events":
            if let event = event(element, at: path(), location: location), problemCount == 0 { try sink.receive(event) }
        default:
            if let image = image(element, at: path(), location: location, pageURL: pageURL), problemCount == 0 {
                try sink.receive(image)
            }
        }
    }

    /// Records a problem found outside the document (a `next` link that loops, say).
    mutating func report(source: String, path: String, message: String) {
        problem(path, message, source: source)
    }

    var hasProblems: Bool { problemCount > 0 }

    func finish() throws {
        // The keys' table on disk failed: the checks are incomplete, so nothing may be applied.
        if let failure = keys.failure { throw failure }
        if problemCount > 0 { throw FeedValidationError(problems: problems, totalCount: problemCount) }
    }

    // MARK: Records
    //
    // Paths are autoclosures: they are formatted only when a problem is reported, never for the
    // million records that have none.

    private mutating func framework(_ value: JSONValue, at path: @autoclosure () -> String, location: KeyLocation) -> Framework? {
        guard let members = object(value, at: path()) else { return nil }
        let id = identifier(value, at: path(), kind: .framework, location: location)
        let name = string(value, "name", at: path())
        let imageName = string(value, "imageName", at: path())
        let urlString = string(value, "urlString", at: path())
        let description = string(value, "description", at: path())
        checkDuplicateMembers(members, at: path())
        guard let id, let name, let imageName, let urlString, let description else { return nil }
        return Framework(id: id, name: name, imageName: imageName, urlString: urlString, description: description)
    }

    private mutating func order(_ value: JSONValue, at path: @autoclosure () -> String, location: KeyLocation) -> Order? {
        guard let members = object(value, at: path()) else { return nil }
        checkDuplicateMembers(members, at: path())
        let id = identifier(value, at: path(), kind: .order, location: location)
        var placedAt: Date?
        if let text = string(value, "placedAt", at: path()) {
            placedAt = Timestamp.parse(text)
            if placedAt == nil {
                problem(path() + ".placedAt", "\(quote(text)) is not an RFC 3339 timestamp such as 2026-11-20T09:30:00Z")
            }
        }
        var items: [OrderItem]? = nil
        switch value["items"] {
        case nil: problem(path() + ".items", "is required (at least one item)")
        case .array(let elements)?:
            if elements.isEmpty { problem(path() + ".items", "must hold at least one item") }
            var parsed: [OrderItem] = []
            var valid = true
            for (index, element) in elements.enumerated() {
                if let item = item(element, at: "\(path()).items[\(index)]") { parsed.append(item) } else { valid = false }
            }
            if valid && !elements.isEmpty { items = parsed }
            if let parsed = items, (try? Order(id: "", placedAt: Date(), items: parsed).total) == nil {
                problem(path() + ".items", "the order's total is more than the maximum amount \(Money.maximum)")
                items = nil
            }
        case let other?: problem(path() + ".items", "expected an array, found \(other.typeDescription)")
        }
        guard let id, let placedAt, let items else { return nil }
        return Order(id: id, placedAt: placedAt, items: items)
    }

    private mutating func item(_ value: JSONValue, at path: @autoclosure () -> String) -> OrderItem? {
        guard let members = object(value, at: path()) else { return nil }
        checkDuplicateMembers(members, at: path())
        let name = string(value, "itemName", at: path())
        var price: Money?
        switch value["price"] {
        case nil: problem(path() + ".price", "is required")
        case .number(let text)?:
            switch Money.parseAmount(text) {
            case .cents(let cents) where cents <= Money.maximum.minorUnits: price = Money(minorUnits: cents)
            case .cents, .tooLarge:
                problem(path() + ".price", "\(text.prefix(40)) is too large: at most \(Money.maximum)")
            case .invalid:
                problem(path() + ".price", "\(text) is not an amount of money: at least 0, at most 2 fraction digits")
            }
        case let other?: problem(path() + ".price", "expected a number, found \(describe(other))")
        }
        let aisle = integer(value, "aisle", at: path(), minimum: 0, required: true)
        let quantity = integer(value, "quantity", at: path(), minimum: 1, maximum: OrderItem.maximumQuantity, required: false)
        guard let name, let price, let aisle else { return nil }
        if value["quantity"] != nil && quantity == nil { return nil }
        let item = OrderItem(itemName: name, price: price, aisle: aisle, quantity: quantity ?? 1)
        if let reason = item.amountProblem {
            problem(path(), reason)
            return nil
        }
        return item
    }

    private mutating func event(_ value: JSONValue, at path: @autoclosure () -> String, location: KeyLocation) -> Event? {
        guard let members = object(value, at: path()) else { return nil }
        checkDuplicateMembers(members, at: path())
        let id = identifier(value, at: path(), kind: .event, location: location)
        let title = string(value, "title", at: path())
        var date: CalendarDate?
        if let text = string(value, "date", at: path()) {
            date = CalendarDate(text)
            if date == nil { problem(path() + ".date", "\(quote(text)) is not a calendar date (YYYY-MM-DD, a day that exists)") }
        }
        var notes: String?
        switch value["notes"] {
        case nil, .null?: break
        case .string(let text)?: notes = text
        case let other?: problem(path() + ".notes", "expected a string, found \(other.typeDescription)")
        }
        guard let id, let title, let date else { return nil }
        return Event(id: id, title: title, date: date, notes: notes)
    }

    private mutating func image(_ value: JSONValue, at path: @autoclosure () -> String, location: KeyLocation, pageURL: URL)
        -> FeedImage?
    {
        guard let members = object(value, at: path()) else { return nil }
        checkDuplicateMembers(members, at: path())
        guard let text = string(value, "url", at: path()) else { return nil }
        guard let url = resolveImageURL(text, at: path() + ".url", pageURL: pageURL) else { return nil }
        let resolved = URL(string: text, relativeTo: pageURL)?.absoluteURL
        var folder: URL?
        if pageURL.isFileURL, let resolved, resolved.isFileURL {
            folder = localFolder ?? pageURL.deletingLastPathComponent()
            if let reason = LocalImagePath.refusal(text, location: resolved, folder: folder!) {
                problem(path() + ".url", "\(quote(text)) \(reason); refused")
                return nil
            }
        }
        var data: Data?
        switch value["data"] {
        case nil, .null?: break
        case .string(let base64)?:
            data = Data(base64Encoded: base64, options: .ignoreUnknownCharacters)
            if data == nil { problem(path() + ".data", "is not valid base64") }
        case let other?: problem(path() + ".data", "expected a base64 string, found \(other.typeDescription)")
        }
        var contentType: String?
        switch value["contentType"] {
        case nil, .null?: break
        case .string(let text)?: contentType = text
        case let other?: problem(path() + ".contentType", "expected a string, found \(other.typeDescription)")
        }
        if value["data"] != nil, value["data"] != .null, data == nil { return nil }
        guard noteKey(url, kind: .image, at: path() + ".url", location: location) else { return nil }
        var image = FeedImage(url: url, data: data, contentType: contentType)
        image.location = resolved
        image.folder = folder
        return image
    }

    /// A record of an app kind, read by the kind's own `decode`; its problems are reported with
    /// their JSON paths.
    private mutating func appRecord(
        _ value: JSONValue, type: any StoreRecord.Type, at path: String,
        location: KeyLocation
    ) -> (any StoreRecord)? {
        guard let members = object(value, at: path) else { return nil }
        checkDuplicateMembers(members, at: path)
        let id = identifier(value, at: path, kind: type.kind, location: location)
        var fields = FeedFields(value: value, path: path)
        let record = type.decode(&fields)
        for found in fields.problems { problem(found.path, found.message) }
        guard id != nil, let record, fields.problems.isEmpty else { return nil }
        return record
    }

    private mutating func tombstones<Sink: FeedSink>(_ value: JSONValue, page: Int32, pageURL: URL, into sink: inout Sink) throws
    {
        guard value != .null else { return }
        guard case .object(let members) = value else {
            problem("deleted", "expected an object of arrays per kind, found \(value.typeDescription)")
            return
        }
        checkDuplicateMembers(members, at: "deleted")
        for kind in RecordKind.allCases + recordTypes.map({ $0.kind }) {
            let path = "deleted.\(kind.plural)"
            switch value[kind.plural] {
            case nil, .null?: continue
            case .array(let elements)?:
                for (index, element) in elements.enumerated() {
                    recordCount += 1
                    let elementPath = { "\(path)[\(index)]" }
                    guard case .string(var key) = element else {
                        problem(elementPath(), "expected a string (\(kind.keyField)), found \(element.typeDescription)")
                        continue
                    }
                    if kind == .image {
                        guard let resolved = resolveImageURL(key, at: elementPath(), pageURL: pageURL) else { continue }
                        key = resolved
                    } else if let reason = RecordValidation.problem(withID: key) {
                        problem(elementPath(), "\(quote(key)) \(reason)")
                        continue
                    }
                    let location = KeyLocation(page: page, index: Int32(truncatingIfNeeded: index), isTombstone: true)
                    if let first = keys.insert(key, slot: slot(kind), at: location) {
                        if first.isTombstone {
                            problem(elementPath(), "\(quote(key)) is already deleted at \(describe(first, kind: kind))")
                        } else {
                            problem(
                                elementPath(),
                                "\(quote(key)) is also in \(describe(first, kind: kind)): a record cannot be both sent and deleted"
                            )
                        }
                    } else if problemCount == 0 {
                        try sink.receiveTombstone(key, kind: kind)
                    }
                }
            case let other?: problem(path, "expected an array, found \(other.typeDescription)")
            }
        }
    }

    // MARK: Fields

    private mutating func identifier(
        _ value: JSONValue, at path: @autoclosure () -> String, kind: RecordKind, location: KeyLocation
    ) -> String? {
        guard let id = string(value, "id", at: path()) else { return nil }
        if let reason = RecordValidation.problem(withID: id) {
            problem(path() + ".id", "\(quote(id)) \(reason)")
            return nil
        }
        return noteKey(id, kind: kind, at: path() + ".id", location: location) ? id : nil
    }

    /// Records that `key` appears at `location`; false (with a problem) if it already appeared.
    private mutating func noteKey(_ key: String, kind: RecordKind, at path: @autoclosure () -> String, location: KeyLocation)
        -> Bool
    {
        guard let first = keys.insert(key, slot: slot(kind), at: location) else { return true }
        if first.isTombstone {
            problem(
                path(),
                "\(quote(key)) is also deleted at \(describe(first, kind: kind)): a record cannot be both sent and deleted")
        } else {
            problem(path(), "\(quote(key)) is a duplicate: it already appears at \(describe(first, kind: kind))")
        }
        return false
    }

    private mutating func string(_ value: JSONValue, _ field: String, at path: @autoclosure () -> String) -> String? {
        switch value[field] {
        case .string(let text)?: return text
        case nil: problem("\(path()).\(field)", "is required (a string)")
        case let other?: problem("\(path()).\(field)", "expected a string, found \(describe(other))")
        }
        return nil
    }

    private mutating func integer(
        _ value: JSONValue, _ field: String, at path: @autoclosure () -> String, minimum: Int,
        maximum: Int = .max, required: Bool
    ) -> Int? {
        switch value[field] {
        case nil:
            if required { problem("\(path()).\(field)", "is required (an integer of at least \(minimum))") }
        case .number(let text)?:
            let number = Int(text)
            if let number, number >= minimum, number <= maximum { return number }
            let digitsOnly = !text.isEmpty && text.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            if number.map({ $0 > maximum }) ?? digitsOnly {
                problem("\(path()).\(field)", "\(text.prefix(40)) is too large: at most \(maximum)")
                return nil
            }
            problem("\(path()).\(field)", "\(text.prefix(40)) is not an integer of at least \(minimum)")
        case let other?: problem("\(path()).\(field)", "expected an integer, found \(describe(other))")
        }
        return nil
    }

    private mutating func object(_ value: JSONValue, at path: @autoclosure () -> String) -> [JSONMember]? {
        guard case .object(let members) = value else {
            problem(path(), "expected an object, found \(value.typeDescription)")
            return nil
        }
        return members
    }

    private mutating func checkDuplicateMembers(_ members: [JSONMember], at path: @autoclosure () -> String) {
        guard members.count > 1 else { return }
        // Records have a handful of members: comparing pairs beats building a set.
        if members.count <= 16 {
            for index in 1..<members.count {
                let key = members[index].key
                if members[..<index].contains(where: { Self.sameBytes($0.key, key) }) {
                    problem(path(), "the member \(quote(key)) appears more than once")
                }
            }
            return
        }
        var names = Set<ExactKey>()
        for member in members where !names.insert(ExactKey(member.key)).inserted {
            problem(path(), "the member \(quote(member.key)) appears more than once")
        }
    }

    /// Byte equality, the length first (O(1) for native strings).
    private static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.count == rhs.utf8.count && lhs.utf8.elementsEqual(rhs.utf8)
    }

    /// An image url: absolute http(s), or relative to the page. Never another scheme, and a
    /// remote page can never name a `file:` URL.
    private mutating func resolveImageURL(_ text: String, at path: @autoclosure () -> String, pageURL: URL) -> String? {
        guard !text.isEmpty, let url = URL(string: text, relativeTo: pageURL)?.absoluteURL, let scheme = url.scheme?.lowercased()
        else {
            problem(path(), "\(quote(text)) is not a URL")
            return nil
        }
        let pageIsFile = pageURL.isFileURL
        let isRelative = URL(string: text)?.scheme == nil
        switch scheme {
        case "http", "https": break
        case "file" where pageIsFile && isRelative: break
        default:
            problem(path(), "\(quote(text)) must be an http(s) URL or relative to the feed")
            return nil
        }
        // Relative urls of a local feed stay as written: the key must not depend on where the file lies.
        return pageIsFile && isRelative ? text : url.absoluteString
    }

    // MARK: Reporting

    private mutating func problem(_ path: String, _ message: String, source: String? = nil) {
        problemCount += 1
        if problems.count < Self.maximumProblems {
            problems.append(FeedProblem(source: source ?? self.source, path: path, message: message))
        }
    }

    /// Where a key was first seen: `feed.json: frameworks[3].id`.
    private func describe(_ location: KeyLocation, kind: RecordKind) -> String {
        let source = pageNames[Int(location.page)]
        if location.isTombstone { return "\(source): deleted.\(kind.plural)[\(location.index)]" }
        return "\(source): \(kind.plural)[\(location.index)].\(kind.keyField)"
    }

    private static func kind(ofArray name: String) -> RecordKind {
        switch name {
        case "frameworks": .framework
        case "orders": .order
        case "events": .event
        default: .image
        }
    }

    private func slot(_ kind: RecordKind) -> Int {
        switch kind {
        case .framework: 0
        case .order: 1
        case .event: 2
        case .image: 3
        default: 4 + recordTypes.firstIndex { $0.kind == kind }!
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
        let clipped =
            text.unicodeScalars.count > 60 ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(60))) + "…" : text
        return "'\(clipped)'"
    }
}
