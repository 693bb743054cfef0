import Foundation

/// `manifest.json` of a published feed (<doc:FeedFormat>, version 2): the one mutable file of a
/// published folder. It names a generation, the head sequence number, the snapshot's files and
/// the change segments after the snapshot, each with its size and SHA-256.
///
/// `parse(_:source:)` is strict: a manifest is read from any server, so every
/// file name must be a plain name inside the manifest's own folder (no `/`, no `..`, no URL),
/// sizes are bounded, digests are 64 lowercase hex digits, and the segments must reach back to
/// the snapshot and follow each other without gap or overlap. Each problem names the file and the field.
struct PublishedManifest: Sendable, Equatable {
    /// One immutable file the manifest names.
    struct File: Sendable, Equatable {
        var name: String
        var size: Int
        var sha256: String
    }

    /// The records changed between two publishes: sequence numbers `from` through `to`.
    struct Segment: Sendable, Equatable {
        var from: Int
        var to: Int
        var file: File
    }

    /// A file no manifest names any more, deleted once the grace period after `since` is over.
    struct Retired: Sendable, Equatable {
        var name: String
        var since: Date
    }

    var generation: String
    var head: Int
    /// The sequence number the snapshot is the state of.
    var snapshotSequence: Int
    /// Version-1 pages, read in order; together the whole state at `snapshotSequence`.
    var snapshotFiles: [File]
    var segments: [Segment]
    /// The publisher's own state: the store published from and its last published transaction.
    var storeID: String
    var transaction: Int64
    /// A digest of that transaction's change-log entry (see `Publisher`): two copies of one
    /// store share its identity and transaction numbers, not their entries. Nil in a manifest
    /// written before it existed.
    var transactionDigest: String? = nil
    var retired: [Retired] = []

    static let fileName = "manifest.json"

    /// Every file a client may read.
    var files: [File] { snapshotFiles + segments.map(\.file) }

    // MARK: Writing

    var jsonValue: JSONValue {
        func file(_ file: File) -> [JSONMember] {
            [
                JSONMember("name", .string(file.name)), JSONMember("size", .integer(file.size)),
                JSONMember("sha256", .string(file.sha256)),
            ]
        }
        return .object([
            JSONMember("version", .integer(2)),
            JSONMember("generation", .string(generation)),
            JSONMember("head", .integer(head)),
            JSONMember(
                "snapshot",
                .object([
                    JSONMember("sequence", .integer(snapshotSequence)),
                    JSONMember("files", .array(snapshotFiles.map { .object(file($0)) })),
                ])),
            JSONMember(
                "segments",
                .array(
                    segments.map {
                        .object([JSONMember("from", .integer($0.from)), JSONMember("to", .integer($0.to))] + file($0.file))
                    })),
            JSONMember(
                "publisher",
                .object(
                    [
                        JSONMember("store", .string(storeID)), JSONMember("transaction", .integer(transaction)),
                    ] + (transactionDigest.map { [JSONMember("transactionDigest", .string($0))] } ?? []) + [
                        JSONMember(
                            "retired",
                            .array(
                                retired.map {
                                    .object([
                                        JSONMember("name", .string($0.name)),
                                        JSONMember("since", .string(Timestamp.format($0.since))),
                                    ])
                                }))
                    ])),
        ])
    }

    var data: Data { Data((JSONWriter(pretty: true).string(jsonValue) + "\n").utf8) }

    // MARK: Reading

    /// Whether `data` is to be read as a manifest rather than a version-1 page: a top-level
    /// `version` of 2 and any member only a manifest has. Only a quick scan; `parse` checks the
    /// rest, and names what is missing (a manifest without its `generation` used to be read as
    /// a version-1 page, and refused with "version: must be 1").
    static func looksLikeManifest(_ data: Data) -> Bool {
        guard case .number("2")? = JSONParser.topLevelMember("version", in: data) else { return false }
        return ["generation", "head", "snapshot", "segments"].contains { JSONParser.topLevelMember($0, in: data) != nil }
    }

    /// The largest sequence number and file count a manifest may name.
    static let maximumSequence = 1 << 53
    static let maximumFiles = 100_000

    static func parse(_ data: Data, source: String) throws -> PublishedManifest {
        func fail(_ path: String, _ message: String) -> ManifestError {
            ManifestError(source: source, path: path, message: message)
        }
        let root: JSONValue
        do {
            root = try JSONParser.parse(data)
        } catch {
            throw fail("", error is JSONValueLimitError ? "the manifest \(error)" : "not valid JSON: \(error)")
        }
        guard case .object = root else { throw fail("", "expected an object, found \(root.typeDescription)") }
        // A member named twice is refused, as in a feed page: readers disagree on which one
        // counts (this one took the first, many take the last).
        func checkDuplicates(_ value: JSONValue?, _ path: String) throws {
            guard case .object(let members)? = value else { return }
            var seen = Set<ExactKey>()
            for member in members where !seen.insert(ExactKey(member.key)).inserted {
                throw fail(path, "the member '\(member.key.prefix(60))' appears more than once")
            }
        }
        try checkDuplicates(root, "")
        try checkDuplicates(root["snapshot"], "snapshot")
        func integer(_ value: JSONValue?, _ path: String, minimum: Int = 0, maximum: Int = maximumSequence) throws -> Int {
            guard let value else { throw fail(path, "is required") }
            guard case .number(let text) = value, let number = Int(text) else {
                throw fail(
                    path,
                    "expected an integer, found \(value.typeDescription == "a number" ? "a number that is not an integer" : value.typeDescription)"
                )
            }
            guard number >= minimum, number <= maximum else {
                throw fail(path, "\(number) is out of range \(minimum)...\(maximum)")
            }
            return number
        }
        func string(_ value: JSONValue?, _ path: String) throws -> String {
            guard let value else { throw fail(path, "is required") }
            guard case .string(let text) = value else { throw fail(path, "expected a string, found \(value.typeDescription)") }
            return text
        }
        func file(_ value: JSONValue, _ path: String) throws -> File {
            guard case .object = value else { throw fail(path, "expected an object, found \(value.typeDescription)") }
            try checkDuplicates(value, path)
            let name = try string(value["name"], path + ".name")
            if let reason = refusal(ofName: name) { throw fail(path + ".name", "\(FeedFields.quote(name)) \(reason)") }
            let size = try integer(value["size"], path + ".size", maximum: maximumSequence)
            // The sync's cap on a file is checked by the sync, for the files it reads.
            let digest = try string(value["sha256"], path + ".sha256")
            guard digest.utf8.count == 64, digest.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
            else {
                throw fail(path + ".sha256", "expected 64 lowercase hex digits, found '\(digest.prefix(80))'")
            }
            return File(name: name, size: size, sha256: digest)
        }

        guard case .number("2")? = root["version"] else {
            throw fail("version", "must be 2 for a manifest, found \(root["version"].map(\.typeDescription) ?? "nothing")")
        }
        let generation = try string(root["generation"], "generation")
        guard (1...64).contains(generation.utf8.count),
            generation.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x7a).contains($0) || $0 == 0x2d })
        else {
            throw fail("generation", "expected 1 to 64 lowercase letters, digits or '-'")
        }
        let head = try integer(root["head"], "head", minimum: 1)
        guard let snapshot = root["snapshot"], case .object = snapshot else { throw fail("snapshot", "is required (an object)") }
        let snapshotSequence = try integer(snapshot["sequence"], "snapshot.sequence", minimum: 1, maximum: head)
        guard case .array(let snapshotValues)? = snapshot["files"], !snapshotValues.isEmpty else {
            throw fail("snapshot.files", "is required (a non-empty array)")
        }
        guard case .array(let segmentValues)? = root["segments"] else { throw fail("segments", "is required (an array)") }
        guard snapshotValues.count + segmentValues.count <= maximumFiles else {
            throw fail("", "names more than \(maximumFiles) files")
        }
        let snapshotFiles = try snapshotValues.enumerated().map { try file($1, "snapshot.files[\($0)]") }
        var segments: [Segment] = []
        var expected = snapshotSequence + 1
        for (index, value) in segmentValues.enumerated() {
            let path = "segments[\(index)]"
            let entry = try file(value, path)
            let from = try integer(value["from"], path + ".from", minimum: 1)
            let to = try integer(value["to"], path + ".to", minimum: from)
            // The first may start before the snapshot (kept for clients whose cursor is older);
            // every later one continues the one before.
            guard index == 0 ? from <= expected : from == expected else {
                throw fail(
                    path + ".from",
                    index == 0
                        ? "is \(from) but at most \(expected) was expected: the segments must reach back to the snapshot"
                        : "is \(from) but \(expected) was expected: segments must follow each other without gap or overlap"
                )
            }
            segments.append(Segment(from: from, to: to, file: entry))
            expected = to + 1
        }
        guard expected - 1 == head else {
            throw fail("head", "is \(head) but the \(segments.isEmpty ? "snapshot" : "last segment") ends at \(expected - 1)")
        }
        var names = Set<String>()
        for (index, entry) in (snapshotFiles + segments.map(\.file)).enumerated() where !names.insert(entry.name).inserted {
            throw fail("", "the file '\(entry.name)' is named twice (entry \(index + 1))")
        }
        // The publisher's state is its own; a client need not understand it.
        var storeID = "", transaction: Int64 = 0, transactionDigest: String?
        var retired: [Retired] = []
        if let publisher = root["publisher"], case .object = publisher {
            if case .string(let id)? = publisher["store"] { storeID = id }
            if case .number(let text)? = publisher["transaction"], let tx = Int64(text) { transaction = tx }
            if case .string(let digest)? = publisher["transactionDigest"] { transactionDigest = digest }
            if case .array(let values)? = publisher["retired"] {
                for value in values {
                    if case .string(let name)? = value["name"], refusal(ofName: name) == nil,
                        case .string(let since)? = value["since"], let date = Timestamp.parse(since)
                    {
                        retired.append(Retired(name: name, since: date))
                    }
                }
            }
        }
        return PublishedManifest(
            generation: generation, head: head, snapshotSequence: snapshotSequence,
            snapshotFiles: snapshotFiles, segments: segments, storeID: storeID,
            transaction: transaction, transactionDigest: transactionDigest, retired: retired)
    }

    /// Why a file name is refused, or nil: only a plain name in the manifest's folder.
    static func refusal(ofName name: String) -> String? {
        guard (1...128).contains(name.utf8.count) else { return "must be 1 to 128 characters" }
        guard name.utf8.first != UInt8(ascii: ".") else { return "must not start with '.' (no hidden files, no '..')" }
        let allowed = name.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0)
                || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
        }
        guard allowed, name != Self.fileName else {
            return "is not a plain file name in the manifest's folder (letters, digits, '.', '-', '_'; no '/', no URL)"
        }
        return nil
    }
}

/// A manifest, or a file it names, that cannot be used: the sync fails and its records are
/// unchanged. The store is unchanged too (but for the failed sync's history row), except when
/// `cursorMarkedSuspect` says otherwise.
public struct ManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The manifest's or the file's location: a path or a URL.
    public let source: String
    /// The JSON path in the manifest, or the file's name.
    public let path: String
    /// What is wrong, in words.
    public let message: String
    /// True for a manifest older than the store's cursor (refused): the source's cursor was
    /// marked suspect, so that its next sync reads the snapshot. Nothing else was written but
    /// the failure's history row.
    public let cursorMarkedSuspect: Bool

    init(source: String, path: String, message: String, cursorMarkedSuspect: Bool = false) {
        self.source = source
        self.path = path
        self.message = message
        self.cursorMarkedSuspect = cursorMarkedSuspect
    }

    public var description: String { path.isEmpty ? "\(source): \(message)" : "\(source): \(path): \(message)" }
}
