import Foundation

// Export streams: records are read from one cursor per kind inside one read snapshot and
// written through `FeedPageWriter` to a `ByteSink` as they are read, so exporting a store of
// any size holds a buffer and one record, never the document.

extension Store {
    /// The whole store as one version-1 feed (<doc:FeedFormat>), read in one snapshot, records ordered
    /// by key. With `includingImageData: false`, images carry only their url and content type.
    /// The same store always gives the same bytes. Held in memory: for a large store, write it
    /// out with `exportFeed(to:)` or `exportFeed(toFile:)` instead.
    public func exportFeed(includingImageData: Bool = true) async throws -> String {
        try await exportFeedPages(pageSize: nil, includingImageData: includingImageData)[0].text
    }

    /// The whole store as feed pages of at most `pageSize` records each (all in one page when
    /// nil), linked by `next`: page 1 is `firstPageName`, page n is `feed-n.json` beside it.
    /// Serve the folder from any static HTTP server; clients revalidate with ETags. Held in
    /// memory: for a large store, use `exportFeedPages(pageSize:toFolder:)`.
    public func exportFeedPages(
        pageSize: Int?, includingImageData: Bool = true, firstPageName: String = "feed.json"
    ) async throws -> [FeedPageFile] {
        precondition(pageSize.map { $0 > 0 } ?? true, "pageSize must be positive")
        let recordTypes = configuration.recordTypes
        return try await read { db in
            var pages: [FeedPageFile] = []
            var sink = ByteSink()
            try Self.writeFeed(
                db, recordTypes: recordTypes, pageSize: pageSize, includingImageData: includingImageData,
                firstPageName: firstPageName,
                startPage: { _ in
                    sink = ByteSink(); return sink
                },
                endPage: { name in pages.append(FeedPageFile(name: name, text: String(decoding: sink.memory, as: UTF8.self))) })
            return pages
        }
    }

    /// Writes the whole store as one feed (the bytes of `exportFeed()`) to `output` (a file
    /// or a pipe, stdout say) as it is read, in bounded memory. The handle is left open.
    public func exportFeed(to output: FileHandle, includingImageData: Bool = true) async throws {
        let descriptor = output.fileDescriptor
        let recordTypes = configuration.recordTypes
        try await read { db in
            // Errors name the stream: "stdout: cannot write: Broken pipe".
            let name = descriptor == STDOUT_FILENO ? "stdout" : descriptor == STDERR_FILENO ? "stderr" : "output"
            let sink = ByteSink(descriptor: descriptor, name: name)
            try Self.writeFeed(
                db, recordTypes: recordTypes, pageSize: nil, includingImageData: includingImageData, firstPageName: "feed.json",
                startPage: { _ in sink }, endPage: { _ in })
        }
    }

    /// Writes the whole store as one feed to the file at `path` in bounded memory, through a
    /// temporary file renamed into place (see `OutputFile`): `path` holds its old content or
    /// the whole export, never part. The store's own files are refused. Temporary files that
    /// exports killed before their rename left beside `path` (`.NAME.tmp-XXXXXX`) are removed
    /// once a day old. A symbolic link at
    /// `path` is followed (the file it names is replaced); a device or FIFO is written as it is,
    /// and `/dev/stdout` or `/dev/fd/N` write to that open descriptor.
    public func exportFeed(toFile path: String, includingImageData: Bool = true) async throws {
        _ = try await exportPages(
            pageSize: nil, includingImageData: includingImageData, followingLinks: true, paths: { _ in path })
    }

    /// Writes the store as pages of at most `pageSize` records into `folder` (which must
    /// exist), named as `exportFeedPages(pageSize:)` names them, in bounded memory. A page also
    /// ends before the record that would take it past `pageBytes` (its separators, closing
    /// brackets and `next` are not weighed; a record larger than that has a page of its own): pages cut by count alone grew with the records, twenty 20 MB
    /// images to a page of 533 MB that clients refuse (`SyncOptions.maximumBytes`, 256 MiB
    /// by default), as a publish's snapshot pages did (`PublishOptions.snapshotPageBytes`). Every page
    /// is written to a temporary file first and all are renamed into place at the end, the
    /// first page last, so a reader never sees a page before its successors; the pages are not
    /// replaced as one, though: a process killed during the renames leaves the folder with some
    /// pages of each export (``publish(to:options:)`` replaces a whole snapshot at once). Temporary
    /// files that exports killed before their renames left (`.feed-2.json.tmp-XXXXXX`) are
    /// removed once a day old. Returns the pages' names, in order.
    public func exportFeedPages(
        pageSize: Int, pageBytes: Int = 32 << 20, includingImageData: Bool = true, firstPageName: String = "feed.json",
        toFolder folder: String
    ) async throws -> [String] {
        precondition(pageSize > 0, "pageSize must be positive")
        precondition(pageBytes > 0, "pageBytes must be positive")
        let paths = try await exportPages(
            pageSize: pageSize, pageBytes: pageBytes, includingImageData: includingImageData, firstPageName: firstPageName,
            followingLinks: false, paths: { folder + "/" + $0 })
        return paths.map { PathName.lastComponent(of: $0) }
    }

    private func exportPages(
        pageSize: Int?, pageBytes: Int? = nil, includingImageData: Bool, firstPageName: String = "feed.json",
        followingLinks: Bool,
        paths: @escaping @Sendable (String) -> String
    ) async throws -> [String] {
        let storePath = path
        let recordTypes = configuration.recordTypes
        let now = Date() // compared with files' modification times: the system's clock, not the store's
        return try await read { db in
            var staged: [PendingOutput] = []
            var current: PendingOutput?
            do {
                try Self.writeFeed(
                    db, recordTypes: recordTypes, pageSize: pageSize, pageBytes: pageBytes,
                    includingImageData: includingImageData, firstPageName: firstPageName,
                    startPage: { name in
                        let path = paths(name)
                        if let storePath, OutputFile.isStore(path, storePath: storePath) {
                            throw OutputFileError(path: path, reason: "that is the store (or one of its files)")
                        }
                        let page = try OutputFile.begin(
                            path, followingLinks: followingLinks, checkCancellation: { try db.checkCancellation() })
                        current = page
                        return ByteSink(descriptor: page.descriptor, name: path)
                    },
                    endPage: { _ in
                        guard let page = current else { return }
                        current = nil
                        try OutputFile.finish(page)
                        staged.append(page)
                    })
            } catch {
                if let page = current { OutputFile.abandon(page) }
                OutputFile.discardFinished(staged)
                throw error
            }
            try OutputFile.renameIntoPlace(staged)
            Self.removeStaleTemporaries(besides: staged, pages: pageSize != nil, now: now, storePath: storePath)
            return staged.map(\.path)
        }
    }

    /// How long a temporary file of an export must have been left unmodified before a later
    /// export to the same place removes it: a day. Exports to one folder do not lock it (a
    /// publish does), and a paged export's finished pages wait, unmodified, until its last page
    /// is written: a shorter grace could remove a long export's pages under it.
    static let exportTemporaryGrace: TimeInterval = 86_400

    /// Removes what exports killed before their renames (SIGKILL, a power cut) left beside the
    /// files just written: their temporary files, once unmodified for `exportTemporaryGrace`. For
    /// pages, those of any page's name (an earlier export may have had more pages).
    private static func removeStaleTemporaries(besides written: [PendingOutput], pages: Bool, now: Date, storePath: String?) {
        let places = written.compactMap(\.replaced)
        let names = Set(places.map { PathName.lastComponent(of: $0) })
        for folder in Set(places.map { PathName.folder(of: $0) }) {
            OutputFile.removeStaleTemporaries(
                in: folder, of: { names.contains($0) || (pages && isLaterPageName($0)) }, olderThan: exportTemporaryGrace,
                now: now, storePath: storePath)
        }
    }

    /// Whether `name` is a page's name after the first: `feed-N.json`, N a decimal number from 2
    /// without a leading zero, as `exportFeedPages` names them.
    package static func isLaterPageName(_ name: String) -> Bool {
        guard name.hasPrefix("feed-"), name.hasSuffix(".json") else { return false }
        let number = name.dropFirst("feed-".count).dropLast(".json".count)
        guard let first = number.first, first != "0", number.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        return number.count > 1 || first != "1"
    }

    /// Reads every record in order (each kind in turn, the built-in ones first, each by key) and
    /// writes them as pages of at most `pageSize` records, each ended before a record that would
    /// take it past `pageBytes` unless it is the page's first: `startPage` gives each page's
    /// sink (by name), `endPage` is called once the page is complete.
    private static func writeFeed(
        _ db: Database, recordTypes: [any StoreRecord.Type], pageSize: Int?, pageBytes: Int? = nil, includingImageData: Bool,
        firstPageName: String, startPage: (String) throws -> ByteSink, endPage: (String) throws -> Void
    ) throws {
        let handlers = RecordKinds.handlers(registering: recordTypes)
        let total = try handlers.reduce(0) { $0 + (try $1.count(db)) }
        let kinds = handlers.map(\.kind)
        let size = pageSize ?? max(total, 1)
        // Not (total + size - 1) / size: a page size near Int.max would overflow.
        let pageCount = max(1, total / size + (total % size == 0 ? 0 : 1))
        var number = 1
        var name = pageName(1, first: firstPageName)
        var page = try FeedPageWriter(sink: try startPage(name), kinds: kinds)
        for handler in handlers {
            try handler.forEachFeedValue(db, includingData: includingImageData) { record in
                let text = FeedPageWriter.text(of: record)
                let full = pageBytes.map { page.recordCount > 0 && page.byteCount + text.utf8.count > $0 } ?? false
                if page.recordCount == size || full {
                    number += 1
                    let next = pageName(number, first: firstPageName)
                    try page.finish(next: next)
                    try endPage(name)
                    name = next
                    page = try FeedPageWriter(sink: try startPage(name), kinds: kinds)
                }
                try page.append(text: text, kind: handler.kind)
                try db.checkCancellation()
            }
        }
        // More pages than by count only where a page ended at its bytes.
        precondition(pageBytes == nil ? number == pageCount : number >= pageCount, "the snapshot's count and its records agree")
        try page.finish(next: nil)
        try endPage(name)
    }

    static func pageName(_ number: Int, first: String) -> String {
        number == 1 ? first : "feed-\(number).json"
    }
}

/// One page of an exported feed: its file name and its text.
public struct FeedPageFile: Sendable, Equatable {
    /// The page's file name: `feed.json`, `feed-2.json`.
    public let name: String
    /// The page's JSON text.
    public let text: String
}
