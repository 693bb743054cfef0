import Foundation

/// Writes a change segment document a record at a time, and stops as soon as it is larger than
/// its bound. The one encoder of segments: a publish's new segment, its values read as it goes,
/// and `PublishedSegment.encoded` (a merge of two segments), so a segment's bytes, and with
/// them its digest and name, are the same whichever path wrote it.
///
/// Why: the publish built the segment whole, every changed record's value at once, then the
/// document as text and as bytes, and only then compared its size with
/// `PublishOptions.segmentBytes` (500,000 changes peaked at 446 MB). A segment over the bound is
/// never listed, so one that passes it need not be finished. What this holds: the document up
/// to the bound, the record being written, the keys it is given and the tombstones among them.
struct PublishedSegmentWriter {
    /// What writing the segment gave.
    enum Outcome: Equatable {
        /// The whole document, at most `limit` bytes.
        case fits(Data)
        /// The document passed `limit`: writing stopped once `bytesWritten` bytes were written.
        case oversized(bytesWritten: Int)
    }

    let generation: String
    let from: Int
    let to: Int
    /// The kinds written, in this order (a kind of `keys` not among them is not written).
    let kinds: [RecordKind]
    /// The most bytes of a segment that fits.
    let limit: Int

    /// Writes the segment of the changes to `keys`: per kind, in `kinds` order and by key,
    /// `value` gives each record's current value, nil when it is gone (a tombstone, written in
    /// `deleted` after every kind's records).
    func write(keys: [RecordKind: Set<ExactKey>], value: (RecordKind, String) throws -> JSONValue?) rethrows -> Outcome {
        let writer = JSONWriter(pretty: false)
        var out = Data()
        var text = ""
        // Moves `text` to `out`; false once `out` is over the bound (it can only grow).
        func flush() -> Bool {
            out.append(contentsOf: text.utf8)
            text.removeAll(keepingCapacity: true)
            return out.count <= limit
        }
        // Laid out by the streamed writers, as `JSONWriter` lays out a whole value.
        var document = JSONObjectWriter(writer)
        for (key, value) in [
            ("version", JSONValue.integer(2)), ("generation", .string(generation)), ("from", .integer(from)),
            ("to", .integer(to)),
        ] {
            text += document.member(key, value)
        }
        var deleted: [[ExactKey]] = []
        for kind in kinds {
            text += document.key(kind.plural)
            var records = JSONArrayWriter(writer, depth: 1)
            var tombstones: [ExactKey] = []
            for key in (keys[kind] ?? []).sorted(by: PublishedSegment.precedes) {
                guard let record = try value(kind, key.text) else {
                    tombstones.append(key)
                    continue
                }
                text += records.element(record)
                guard flush() else { return .oversized(bytesWritten: out.count) }
            }
            text += records.end()
            deleted.append(tombstones)
        }
        text += document.key("deleted")
        var deletions = JSONObjectWriter(writer, depth: 1)
        for (kind, tombstones) in zip(kinds, deleted) {
            text += deletions.key(kind.plural)
            var keys = JSONArrayWriter(writer, depth: 2)
            for key in tombstones {
                text += keys.element(.string(key.text))
                guard flush() else { return .oversized(bytesWritten: out.count) }
            }
            text += keys.end()
        }
        text += deletions.end() + document.end() + "\n"
        guard flush() else { return .oversized(bytesWritten: out.count) }
        return .fits(out)
    }
}
