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
    /// After how many records of an array the key registry is sized for the rest of the page.
    static let sizingSample = 64

    private var problems: [FeedProblem] = []
    private var problemCount = 0
    /// Where each key was first seen, per kind (indexed by `slot(kind)`): for duplicate reports.
    /// Keyed by the exact UTF-8 bytes, as SQLite compares keys: Swift's `String ==` treats
    /// canonically equivalent strings ("é" and "e\u{301}") as equal, yet they are two distinct
    /// records in the store. Locations are two integers, formatted only for a report.
    private var keys: FeedKeyRegistry
    /// The kinds the feed may hold (built-in and registered), each with its slot: its index.
    private let kinds: [any RecordKindHandler]
    /// The buffer every record object is read into, reused.
    private var fields = FeedFields(pageURL: URL(fileURLWithPath: "/"))
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
    /// Set for the files of a published feed (snapshot pages and segments): why a `next` there is
    /// refused. The manifest lists every file; a `next` was silently not followed, and the
    /// records of the page it named were missing.
    var nextRefusal: String?

    /// `kinds`: the kinds the feed may hold (`RecordKinds.handlers(registering:)`). `keysInMemory`:
    /// how many keys are remembered in memory before the rest go to a temporary database on disk
    /// (`FeedKeyRegistry`).
    /// `maximumValues`: the most JSON values a record (or any other member of a page, `deleted`'s
    /// keys apart: they are read one by one) may hold; a test's is small.
    init(
        kinds: [any RecordKindHandler] = RecordKinds.builtIn, keysInMemory: Int = FeedKeyRegistry.defaultMemoryLimit,
        maximumValues: Int = JSONParser.defaultMaximumValues
    ) {
        self.kinds = kinds
        self.maximumValues = maximumValues
        keys = FeedKeyRegistry(memoryLimit: keysInMemory, slots: kinds.count)
    }

    private let maximumValues: Int

    /// Reads and checks one page, handing its valid records to `sink` in document order while
    /// the feed has no problem. Throws only what `sink` throws.
    mutating func add<Sink: FeedSink>(_ data: Data, source: String, pageURL: URL, into sink: inout Sink) throws {
        let limit = maximumValues
        try add(source: source, pageURL: pageURL, into: &sink) { try JSONParser.read(data, maximumValues: limit, $0) }
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
        try add(descriptor: handle.fileDescriptor, source: source, pageURL: pageURL, into: &sink, chunkSize: chunkSize)
    }

    /// The same for a page read from `descriptor`, from its current position to its end (the
    /// caller keeps it open): a published file checked once and read again from the same open
    /// file, whatever happens to its name meanwhile.
    mutating func add<Sink: FeedSink>(
        descriptor: Int32, source: String, pageURL: URL, into sink: inout Sink,
        chunkSize: Int = JSONChunkReader.chunkSize
    ) throws {
        let reader = JSONChunkReader(descriptor: descriptor, chunkSize: chunkSize)
        let problemsBefore = problemCount
        let limit = maximumValues
        try add(source: source, pageURL: pageURL, into: &sink) { try JSONParser.read(reader, maximumValues: limit, $0) }
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
        if pageNames.isEmpty, pageURL.isFileURL { localFolder = LocalImagePath.folder(ofFirstPage: pageURL) }
        fields.pageURL = pageURL
        fields.localFolder = localFolder
        pageNames.append(source)
        let page = Int32(pageNames.count - 1)
        var sinkError: (any Error)?
        // A page of a newer version than this client reads: that alone is said (its other
        // members may follow rules this client does not know).
        var newerVersion: String?
        let (problemsBefore, countBefore) = (problems.count, problemCount)
        defer {
            if let newerVersion {
                problems.removeSubrange(problemsBefore...)
                problemCount = countBefore
                problem(
                    "version",
                    "is \(newerVersion.prefix(40)), a newer feed version than this client reads (feed versions 1 and 2); "
                        + "update the client (storectl or the app) to read it")
            }
        }
        do {
            try read { parser in
                guard parser.nextKind == .object else {
                    let document = try parser.discardValue { try sink.checkStopped() }
                    problem("", "the top level must be an object, found \(document)")
                    return
                }
                // Exact bytes, in a set: a page of a million members compared each with all
                // the others before it.
                var names = Set<ExactKey>()
                var hasVersion = false
                try parser.forEachMember { name, parser in
                    guard names.insert(ExactKey(name)).inserted else {
                        problem("", "the member \(FeedFields.quote(name)) appears more than once")
                        try parser.readAndDiscardValue { try sink.checkStopped() }
                        return
                    }
                    do {
                        switch name {
                        case "version":
                            hasVersion = true
                            switch try parser.readValue() {
                            case .number("1"): break
                            // A published feed's segment: version-1 members plus `generation`,
                            // `from` and `to`, which the manifest sync checks.
                            case .number("2") where acceptsSegments: break
                            case .number(let text) where Self.isNewerVersion(text):
                                newerVersion = text
                                // Counted at once, so that no record after it reaches the sink (the
                                // `defer` above says it in its final words).
                                problem("version", "is a newer feed version than this client reads")
                            case let value:
                                problem(
                                    "version",
                                    "must be 1, found \(FeedFields.describe(value)); this build reads version-1 feed pages and version-2 manifests (a published feed is synced from its manifest.json)"
                                )
                            }
                        case _ where kinds.contains(where: { $0.kind.plural == name }):
                            guard parser.nextKind == .array else {
                                // null means absent, as for every optional member: nothing of that kind.
                                let value = try parser.discardValue { try sink.checkStopped() }
                                if value != .null { problem(name, "expected an array, found \(value)") }
                                return
                            }
                            let slot = kinds.firstIndex { $0.kind.plural == name }!
                            var arrayStart = parser.offset
                            try parser.forEachElement { index, parser in
                                if index == 0 {
                                    arrayStart = parser.offset
                                } else if index == Self.sizingSample, let remaining = parser.remainingBytes {
                                    // The records so far tell their size: room for as many keys as
                                    // the rest of the page could hold at that size (an estimate).
                                    let perRecord = max(1, (parser.offset - arrayStart) / index)
                                    keys.reserve(remaining / perRecord + 1, slot: slot)
                                }
                                recordCount += 1
                                do {
                                    if index & 63 == 0 { try sink.checkStopped() }
                                    try record(&parser, slot: slot, arrayName: name, index: index, page: page, into: &sink)
                                } catch let error where !(error is JSONParseError || error is JSONValueLimitError) {
                                    sinkError = error
                                    throw SinkFailed()
                                }
                            }
                        case "deleted":
                            do {
                                try tombstones(&parser, page: page, into: &sink)
                            } catch let error where !(error is JSONParseError || error is JSONValueLimitError) {
                                sinkError = error
                                throw SinkFailed()
                            }
                        case "next":
                            switch try parser.readValue() {
                            case .null: break
                            case .string: if let nextRefusal { problem("next", nextRefusal) }
                            case let value: problem("next", "expected a string (a URL), found \(value.typeDescription)")
                            }
                        default:
                            // Unknown members are ignored, so newer feeds still load; a kind's name
                            // misspelled is refused (a feed of "framework" synced as empty).
                            if let meant = misspelledKind(name) {
                                problem(name, "is no member of the format; did you mean \(FeedFields.quote(meant))?")
                            }
                            try parser.readAndDiscardValue { try sink.checkStopped() }
                        }
                    } catch var error as JSONValueLimitError where error.path.isEmpty {
                        // A top-level member's value (a `version` or `next` of a million values).
                        error.path = name
                        throw error
                    }
                }
                if !hasVersion { problem("version", "is required (the integer 1)") }
            }
        } catch is SinkFailed {
            throw sinkError!
        } catch let error as JSONParseError {
            problem("", "not valid JSON: \(error)")
        } catch let error as JSONValueLimitError {
            // Where the value ends is not known without reading on: the page's check stops here,
            // as it does at a syntax error.
            problem(error.path, error.description)
        }
    }

    /// Whether a `version` number is an integer above 2 (written without fraction or exponent).
    private static func isNewerVersion(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return false }
        return text.utf8.count > 1 ? text.utf8.first != UInt8(ascii: "0") : text > "2"
    }

    /// Stops the read when the sink fails (a disk error, say): its error is rethrown as is.
    private struct SinkFailed: Error {}

    /// Reads one element of a kind's array: an object, read into the buffer, its key checked
    /// and noted, then decoded by its kind, which hands it to `sink` while the feed is valid.
    private mutating func record<Sink: FeedSink>(
        _ parser: inout JSONParser, slot: Int, arrayName: String, index: Int, page: Int32, into sink: inout Sink
    ) throws {
        guard parser.nextKind == .object else {
            let value = try parser.discardValue { try sink.checkStopped() }
            problem("\(arrayName)[\(index)]", "expected an object, found \(value)")
            return
        }
        let handler = kinds[slot]
        fields.start(base: arrayName, index: index)
        try fields.read(&parser)
        if let key = handler.readKey(&fields) {
            takeProblems()
            fields.key = key
            let location = KeyLocation(page: page, index: Int32(truncatingIfNeeded: index), isTombstone: false)
            _ = noteKey(key, slot: slot, at: "\(arrayName)[\(index)].\(handler.kind.keyField)", location: location)
        }
        takeProblems()
        if problemCount == 0 { try sink.receive(&fields, of: handler) } else { handler.check(&fields) }
        takeProblems()
    }

    /// Moves the problems the buffer's record reported into the feed's.
    private mutating func takeProblems() {
        guard fields.problemCount > 0 else { return }
        for found in fields.problems { problem(found.path, found.message) }
        // The ones the buffer only counted (past its first hundred, which are all a feed's
        // error lists): counted here too.
        problemCount += fields.problemCount - fields.problems.count
        fields.clearProblems()
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

    /// The member a feed most likely meant by `name`, if `name` is a kind's member misspelled:
    /// the kind in the singular (`framework`) or its member in another case (`Frameworks`).
    /// Nil for a kind's own member and for anything else (unknown members are ignored).
    private func misspelledKind(_ name: String) -> String? {
        for handler in kinds where !FeedFields.sameBytes(name, handler.kind.plural) {
            let plural = handler.kind.plural
            if FeedFields.sameBytes(name, handler.kind.rawValue) || name.lowercased() == plural
                || name.lowercased() == handler.kind.rawValue
            {
                return plural
            }
        }
        return nil
    }

    /// Reads a page's `deleted` member from `parser`: an object of key arrays per kind, each
    /// key checked and noted, and handed to `sink` while the feed is valid. Read key by key,
    /// never as one tree: a page may delete a million keys, and a hostile one could make the tree
    /// of anything else in their place.
    private mutating func tombstones<Sink: FeedSink>(_ parser: inout JSONParser, page: Int32, into sink: inout Sink) throws {
        guard parser.nextKind == .object else {
            let value = try parser.discardValue { try sink.checkStopped() }
            if value != .null { problem("deleted", "expected an object of arrays per kind, found \(value)") }
            return
        }
        var names = Set<ExactKey>()
        try parser.forEachMember { name, parser in
            guard names.insert(ExactKey(name)).inserted else {
                // The first one counts.
                problem("deleted", "the member \(FeedFields.quote(name)) appears more than once")
                try parser.readAndDiscardValue { try sink.checkStopped() }
                return
            }
            if let meant = misspelledKind(name) {
                problem("deleted.\(name)", "is no kind of the format; did you mean \(FeedFields.quote(meant))?")
            }
            guard let slot = kinds.firstIndex(where: { FeedFields.sameBytes($0.kind.plural, name) }) else {
                try parser.readAndDiscardValue { try sink.checkStopped() }
                return
            }
            let handler = kinds[slot]
            let kind = handler.kind
            let path = "deleted.\(kind.plural)"
            guard parser.nextKind == .array else {
                let value = try parser.discardValue { try sink.checkStopped() }
                if value != .null { problem(path, "expected an array, found \(value)") }
                return
            }
            try parser.forEachElement { index, parser in
                recordCount += 1
                if index & 63 == 0 { try sink.checkStopped() }
                fields.start(base: path, index: index)
                let text: String
                switch parser.nextKind {
                case .string:
                    guard case .string(let string) = try parser.readValue() else { return }
                    text = string
                case let other:
                    try parser.readAndDiscardValue { try sink.checkStopped() }
                    problem(fields.path, "expected a string (\(kind.keyField)), found \(other)")
                    return
                }
                guard let key = handler.tombstoneKey(text, &fields) else {
                    takeProblems()
                    return
                }
                let location = KeyLocation(page: page, index: Int32(truncatingIfNeeded: index), isTombstone: true)
                if let first = keys.insert(key, slot: slot, at: location) {
                    let quoted = FeedFields.quote(key)
                    if first.isTombstone {
                        problem(fields.path, "\(quoted) is already deleted at \(describe(first, kind: kind))")
                    } else {
                        problem(
                            fields.path,
                            "\(quoted) is also in \(describe(first, kind: kind)): a record cannot be both sent and deleted")
                    }
                } else if problemCount == 0 {
                    try sink.receiveTombstone(key, of: handler)
                }
            }
        }
    }

    /// Records that `key` appears at `location`; false (with a problem) if it already appeared.
    private mutating func noteKey(_ key: String, slot: Int, at path: @autoclosure () -> String, location: KeyLocation)
        -> Bool
    {
        guard let first = keys.insert(key, slot: slot, at: location) else { return true }
        let kind = kinds[slot].kind
        let quoted = FeedFields.quote(key)
        if first.isTombstone {
            problem(
                path(),
                "\(quoted) is also deleted at \(describe(first, kind: kind)): a record cannot be both sent and deleted")
        } else {
            problem(path(), "\(quoted) is a duplicate: it already appears at \(describe(first, kind: kind))")
        }
        return false
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
}
