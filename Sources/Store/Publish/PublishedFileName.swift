/// The names a publisher gives the files it writes, and the test that a name is one of them.
///
/// A publish deletes (once their grace period is over) only files named so: never a file of
/// someone else's that shares the folder (`snapshot-notes.json`, `index.html`, a store), even
/// when a manifest edited by hand lists it as retired.
enum PublishedFileName {
    /// A change segment: `segment-FROM-TO-DIGEST.json`, DIGEST the first 16 hex digits of the
    /// file's SHA-256.
    static func segment(from: Int, to: Int, sha256: String) -> String {
        "segment-\(from)-\(to)-\(sha256.prefix(16)).json"
    }

    /// A snapshot page: `snapshot-SEQUENCE-LABEL-DIGEST.json`, LABEL the page's number or
    /// `deleted` (the tombstones' page).
    static func snapshotPage(sequence: Int, label: String, sha256: String) -> String {
        "snapshot-\(sequence)-\(label)-\(sha256.prefix(16)).json"
    }

    /// Whether `name` is a segment's or a snapshot page's name, exactly as written above.
    static func isPublished(_ name: String) -> Bool {
        guard name.hasSuffix(".json") else { return false }
        let parts = name.dropLast(".json".count).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 4, isNumber(parts[1]), isDigest(parts[3]) else { return false }
        switch parts[0] {
        case "segment": return isNumber(parts[2])
        case "snapshot": return isNumber(parts[2]) || parts[2] == "deleted"
        default: return false
        }
    }

    /// Whether a publish writes a file of this name: a segment, a snapshot page, the manifest
    /// (its temporary files, `.NAME.tmp-XXXXXX`, are named after these: see `OutputFile`).
    static func isPublishedOrManifest(_ name: String) -> Bool {
        name == PublishedManifest.fileName || isPublished(name)
    }

    /// A decimal number without a leading zero.
    private static func isNumber(_ text: Substring) -> Bool {
        guard let first = text.first, first != "0" || text.count == 1 else { return false }
        return text.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// 16 lowercase hexadecimal digits.
    private static func isDigest(_ text: Substring) -> Bool {
        text.count == 16 && text.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }
}
