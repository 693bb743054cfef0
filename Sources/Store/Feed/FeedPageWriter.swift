import Foundation

/// Writes one feed page (FEED.md, version 1) to a `ByteSink` record by record, in the exact
/// bytes `JSONWriter(pretty: true)` gives the whole document: the arrays in `RecordKind`
/// order, each record as it comes, nothing kept. Records must arrive grouped by kind, in that
/// order (an export reads them from one cursor per kind).
///
/// This is the export's encoder: `Store.exportFeed(to:)` and the paged exports write through
/// it, and anything that writes feed pages (snapshot publishing) can too.
struct FeedPageWriter {
    private let sink: ByteSink
    private static let writer = JSONWriter(pretty: true)
    /// The arrays, in order: the built-in kinds, then the app's registered kinds.
    private let kinds: [RecordKind]
    /// The array being written (an index into `kinds`); -1 before the first.
    private var current = -1
    /// Records written into the current array.
    private var written = 0
    /// Records written into the page.
    private(set) var recordCount = 0
    /// Bytes written into the page so far (its UTF-8 text).
    private(set) var byteCount = 0

    /// Starts the page: `{` and the version.
    init(sink: ByteSink, kinds: [RecordKind] = RecordKind.allCases) throws {
        self.sink = sink
        self.kinds = kinds
        try write("{\n  \"version\": 1")
    }

    /// A record's text as a page holds it (indented, without the separator before it): for a
    /// caller that weighs it before `append(text:kind:)`.
    static func text(of record: JSONValue) -> String {
        var text = ""
        writer.write(record, into: &text, indent: 2)
        return text
    }

    /// Appends one record (its feed shape, as its kind writes it) to the array of `kind`.
    mutating func append(_ record: JSONValue, kind: RecordKind) throws {
        try append(text: Self.text(of: record), kind: kind)
    }

    /// Appends one record given as `text(of:)` gave it.
    mutating func append(text record: String, kind: RecordKind) throws {
        let index = kinds.firstIndex(of: kind)!
        precondition(index >= current, "records must come grouped by kind, in RecordKind order")
        try move(to: index)
        try write(written == 0 ? "[\n    " : ",\n    ")
        try write(record)
        written += 1
        recordCount += 1
    }

    /// Ends the page: the arrays not written yet (empty), `next` if given, and `}`.
    mutating func finish(next: String?) throws {
        try move(to: kinds.count)
        var text = ""
        if let next {
            text += ",\n  \"next\": "
            JSONWriter.writeString(next, into: &text)
        }
        text += "\n}\n"
        try write(text)
        try sink.flush()
    }

    /// Closes the current array and opens the ones up to `index` (empty until a record comes).
    private mutating func move(to index: Int) throws {
        while current < index {
            if current >= 0 { try write(written == 0 ? "[]" : "\n  ]") }
            current += 1
            written = 0
            guard current < kinds.count else { break }
            var text = ",\n  "
            JSONWriter.writeString(kinds[current].plural, into: &text)
            text += ": "
            try write(text)
        }
    }

    private mutating func write(_ text: String) throws {
        try sink.write(text)
        byteCount += text.utf8.count
    }
}
