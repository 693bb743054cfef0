import Foundation

/// The keys a later file of one manifest sync holds again, so that the sync applies each key's
/// last state once, reconciled against the store as it was before the sync.
///
/// A manifest sync reads the snapshot (or nothing) and then the segments after the cursor, in
/// order. Applied file after file, a record that the snapshot (or an earlier segment) inserted
/// and a later segment changed looked, by then, like a local record that differs from the feed:
/// keep-existing kept its first value, and the cursor moved past the change for good. With the
/// superseded occurrences set aside, the record is new to the store and inserted as the head has
/// it. Superseded records are still validated; they are only not applied.
///
/// Groups: the snapshot's pages are group 0, the first segment group 1, and so on. Only the
/// segments' keys are held (the snapshot's are never superseded by an earlier file).
struct SupersededKeys: Sendable {
    /// Per kind, each key a segment holds (a record or a tombstone), and the last group holding it.
    private var lastGroup: [RecordKind: [String: Int]] = [:]

    /// No key is superseded.
    init() {}

    /// Reads the keys of the segments among `pages` (in sync order; `isSegment` starts a new
    /// group). A segment that does not validate leaves the keys unread: the sync's own pass
    /// then reports it, and fails.
    init(pages: [(file: PublishedFileLoader.Loaded, isSegment: Bool)], kinds: [any RecordKindHandler]) {
        guard pages.filter(\.isSegment).count + (pages.first?.isSegment == false ? 1 : 0) > 1 else { return }
        var group = 0
        for (file, isSegment) in pages where isSegment {
            group += 1
            var validator = FeedValidator(kinds: kinds)
            validator.acceptsSegments = true
            var collector = Collector(group: group)
            do {
                try validator.add(file: file.file, source: file.name, pageURL: file.url, into: &collector)
                try validator.finish()
            } catch {
                self = SupersededKeys()
                return
            }
            for (kind, keys) in collector.keys { lastGroup[kind, default: [:]].merge(keys) { $1 } }
        }
    }

    /// Whether a later group than `group` holds the key: its occurrence in `group` is superseded.
    func isSuperseded(_ kind: RecordKind, _ key: String, inGroup group: Int) -> Bool {
        (lastGroup[kind]?[key] ?? -1) > group
    }

    var isEmpty: Bool { lastGroup.isEmpty }

    /// Collects the keys of one segment.
    private struct Collector: FeedSink {
        let group: Int
        var keys: [RecordKind: [String: Int]] = [:]

        mutating func receive(_ fields: inout FeedFields, of handler: any RecordKindHandler) {
            keys[handler.kind, default: [:]][fields.key] = group
        }

        mutating func receiveTombstone(_ key: String, of handler: any RecordKindHandler) {
            keys[handler.kind, default: [:]][key] = group
        }
    }
}
