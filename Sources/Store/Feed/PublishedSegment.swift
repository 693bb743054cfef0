import Foundation

/// What one change segment of a published feed (<doc:FeedFormat>, version 2) holds: per kind,
/// the records inserted or updated (their whole value at the segment's end) and the keys deleted.
/// A key is in one or the other, never both: the later change wins, so merging two consecutive
/// segments gives the changes of both.
struct PublishedSegment: Sendable, Equatable {
    /// Record values by key, per kind (images keyed by url, the others by id). Keys compared
    /// byte for byte, as SQLite compares them: `é` written NFC and NFD are two records.
    var records: [RecordKind: [ExactKey: JSONValue]] = [:]
    var deleted: [RecordKind: Set<ExactKey>] = [:]

    var isEmpty: Bool { records.values.allSatisfy(\.isEmpty) && deleted.values.allSatisfy(\.isEmpty) }

    mutating func put(_ kind: RecordKind, _ key: String, _ value: JSONValue) {
        put(kind, ExactKey(key), value)
    }

    mutating func delete(_ kind: RecordKind, _ key: String) {
        delete(kind, ExactKey(key))
    }

    private mutating func put(_ kind: RecordKind, _ key: ExactKey, _ value: JSONValue) {
        records[kind, default: [:]][key] = value
        deleted[kind]?.remove(key)
    }

    private mutating func delete(_ kind: RecordKind, _ key: ExactKey) {
        records[kind]?[key] = nil
        deleted[kind, default: []].insert(key)
    }

    /// Applies `newer` on top: its records and deletions win.
    mutating func merge(_ newer: PublishedSegment) {
        for (kind, values) in newer.records {
            for (key, value) in values { put(kind, key, value) }
        }
        for (kind, keys) in newer.deleted {
            for key in keys { delete(kind, key) }
        }
    }

    /// The segment document: `version` 2, `generation`, `from`, `to`, then version-1 members, each
    /// kind's records and tombstones ordered by key, so the same changes give the same bytes.
    /// Written by `PublishedSegmentWriter`, as a publish writes a new segment.
    func encoded(generation: String, from: Int, to: Int, kinds: [RecordKind]) -> Data {
        var keys: [RecordKind: Set<ExactKey>] = [:]
        for (kind, values) in records { keys[kind, default: []].formUnion(values.keys) }
        // A key is a record or a tombstone, never both (`put` and `delete` see to it).
        for (kind, gone) in deleted { keys[kind, default: []].formUnion(gone) }
        let writer = PublishedSegmentWriter(generation: generation, from: from, to: to, kinds: kinds, limit: .max)
        switch writer.write(keys: keys, value: { kind, key in records[kind]?[ExactKey(key)] }) {
        case .fits(let data): return data
        // No document is longer than `Int.max` bytes.
        case .oversized: preconditionFailure("a segment over Int.max bytes")
        }
    }

    /// One array per kind, in `kinds` order, each ordered by key.
    static func recordMembers(_ records: [RecordKind: [ExactKey: JSONValue]], kinds: [RecordKind]) -> [JSONMember] {
        kinds.map { kind in
            let values = records[kind] ?? [:]
            let ordered = values.keys.sorted(by: precedes).map { values[$0]! }
            return JSONMember(kind.plural, .array(ordered))
        }
    }

    /// The `deleted` member: one array per kind, in `kinds` order, each ordered.
    static func tombstones(_ deleted: [RecordKind: Set<ExactKey>], kinds: [RecordKind]) -> JSONValue {
        .object(
            kinds.map { kind in
                JSONMember(
                    kind.plural,
                    .array(
                        (deleted[kind] ?? []).sorted(by: precedes).map {
                            JSONValue.string($0.text)
                        }))
            })
    }

    /// The order of keys in a segment's arrays: by their UTF-8 bytes, as SQLite orders them.
    static func precedes(_ first: ExactKey, _ second: ExactKey) -> Bool {
        first.text.utf8.lexicographicallyPrecedes(second.text.utf8)
    }

    /// The key a record value is filed under: `url` for images, `id` for the others.
    static func key(of value: JSONValue, kind: RecordKind) -> String? {
        guard case .string(let key)? = value[kind.keyField] else { return nil }
        return key
    }

    /// Reads a segment (or a snapshot page's records and `deleted`) written by `encoded`. Used
    /// by the publisher on its own files, to merge them. Records or tombstones of a kind not in
    /// `kinds` (published by a program that registers more kinds) are an error: the merge would
    /// drop them.
    static func parse(_ data: Data, source: String, kinds: [RecordKind]) throws -> PublishedSegment {
        // The publisher's own file, as large as `--segment-bytes` lets it be: no limit on values.
        let root = try JSONParser.parse(data, maximumValues: .max)
        let plurals = Set(kinds.map(\.plural))
        func members(_ value: JSONValue?) -> [JSONMember] {
            if case .object(let members)? = value { return members }
            return []
        }
        for (path, members) in [("", members(root)), ("deleted.", members(root["deleted"]))] {
            for member in members where !plurals.contains(member.key) {
                if case .array(let values) = member.value, !values.isEmpty {
                    throw ManifestError(
                        source: source, path: path + member.key,
                        message:
                            "holds records of a kind this program does not register: merging without them would drop them; "
                            + "publish from the program that registers it")
                }
            }
        }
        var segment = PublishedSegment()
        for kind in kinds {
            if case .array(let values)? = root[kind.plural] {
                for value in values {
                    guard let key = key(of: value, kind: kind) else {
                        throw ManifestError(source: source, path: kind.plural, message: "a record without its key")
                    }
                    segment.put(kind, key, value)
                }
            }
            if case .array(let keys)? = root["deleted"]?[kind.plural] {
                for case .string(let key) in keys { segment.delete(kind, key) }
            }
        }
        return segment
    }
}
