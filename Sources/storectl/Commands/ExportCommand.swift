import ArgumentParser
import Foundation
import Store

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write the whole store as a version-1 feed: to stdout, a file, or pages in a folder.",
        discussion: """
            With --page-size N, --out is a folder: feed.json holds the first N records and links to \
            feed-2.json through `next`, and so on; a page also ends before a record that would take \
            it past --page-bytes (32MiB by default: a client refuses a page over its --max-bytes). \
            Serve the folder with any static HTTP server; clients sync from .../feed.json and \
            revalidate with ETags.
            """
    )

    @OptionGroup var store: StoreOptions
    @Option(help: "Write to this file (or, with --page-size, this folder) instead of stdout; - is stdout.") var out: String?
    @Flag(name: .customLong("no-image-data"), help: "Leave out image bytes (urls and content types only).") var noImageData =
        false
    @Option(name: .customLong("page-size"), parsing: .unconditional, help: "Records per page; needs --out FOLDER.") var pageSize:
        Int?
    @Option(
        name: .customLong("page-bytes"), parsing: .unconditional,
        help: .byteSize(
            "With --page-size, the most bytes of a page", default: "32MiB",
            note: "a record larger than that has a page of its own"))
    var pageBytes: ByteSize?

    func validate() throws {
        if let pageSize {
            if pageSize < 1 { throw ValidationError("--page-size: must be at least 1") }
            if out == nil || out == "-" { throw ValidationError("--page-size needs --out FOLDER") }
        }
        if let pageBytes {
            if pageBytes.bytes < 1 { throw ValidationError("--page-bytes: must be at least 1 byte") }
            if pageSize == nil { throw ValidationError("--page-bytes needs --page-size N and --out FOLDER") }
        }
        if out?.isEmpty == true { throw ValidationError("--out: the path is empty") }
        if let out, out != "-" { try checkNotStore(out) }
    }

    /// An app's store: the export holds the built-in kinds, not the app's (storectl does not
    /// register them), which would otherwise be left out without a word.
    private func warnOfOtherApps() async throws {
        let others = try await store.withStore(.existing) { try await $0.otherAppNamespaces() }
        guard !others.isEmpty else { return }
        let names = others.map { "'\($0)'" }.joined(separator: ", ")
        Output.printError(
            "note: the store also holds the tables of the app \(names) (its migrations); their records are the app's to export and are not in this export"
        )
    }

    /// Refuses an output path that is the store or one of its files, however it is spelled.
    private func checkNotStore(_ path: String) throws {
        if OutputFile.isStore(path, storePath: store.resolvedPath) {
            throw ValidationError(
                "--out \(path): that is the store \(store.resolvedPath) (or one of its files); choose another path")
        }
    }

    func run() async throws {
        do {
            try await export()
        } catch is CancellationError {
            // Interrupted before the renames: the old file (or pages) stays, whole, and no
            // temporary file is left. To stdout, what was written is not a whole feed.
            if let out, out != "-" {
                let what: TerminalText =
                    pageSize == nil ? "\(out) is left as it was" : "the pages in \(out) are left as they were"
                Output.printError("export to \(out) interrupted; \(what)")
            } else {
                Output.printError("export interrupted; what it wrote to stdout is not a whole feed")
            }
            throw CancellationError()
        }
    }

    private func export() async throws {
        try await warnOfOtherApps()
        let (pageSize, includingImageData) = (pageSize, !noImageData)
        // Streamed: records are written as they are read, so an export of any size runs in
        // bounded memory (to stdout, or through temporary files renamed into place: a failed
        // or interrupted export leaves the old files whole and no temporary file).
        guard let out, out != "-" else {
            return try await store.withStore(.existing) {
                try await $0.exportFeed(to: FileHandle.standardOutput, includingImageData: includingImageData)
            }
        }
        guard let pageSize else {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: out, isDirectory: &isDirectory), isDirectory.boolValue {
                throw CLIError("\(out): is a folder; name a file, or write pages into it with --page-size N")
            }
            return try await written {
                try OutputFile.checkWritable(out)
                return try await store.withStore(.existing) {
                    try await $0.exportFeed(toFile: out, includingImageData: includingImageData)
                }
            }
        }
        let names = try await written {
            try await store.withStore(.existing) { store in
                // Created once the store has opened, and removed again if the export then fails
                // (a full disk, a record that cannot be read): a failed export creates no folder.
                let created: CreatedFolders
                do {
                    created = try CreatedFolders.create(out)
                } catch {
                    throw CLIError("\(out): cannot create the folder: \(error.localizedDescription)")
                }
                do {
                    return try await store.exportFeedPages(
                        pageSize: pageSize, pageBytes: pageBytes?.bytes ?? 32 << 20, includingImageData: includingImageData,
                        toFolder: out)
                } catch {
                    created.removeIfEmpty()
                    throw error
                }
            }
        }
        // Pages of an earlier, longer export would be unreachable but confusing: remove them,
        // once the new pages are all in place. Only plain files named as pages are (feed-2.json,
        // feed-3.json, ...): never a folder, nor a file of the user's such as feed-notes.json.
        // Never the store, nor one of its files (a store named feed-2.json in the folder was
        // deleted as an earlier export's page), never a folder: see `OutputFile.removeFiles`.
        let kept = Set(names)
        OutputFile.removeFiles(
            in: out, where: { Store.isLaterPageName($0) && !kept.contains($0) }, storePath: store.resolvedPath)
        Output.printError("wrote \(names.count) page\(names.count == 1 ? "" : "s") to \(out)")
    }

    /// Runs an export to files; a file that cannot be written is reported as before.
    private func written<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as OutputFileError {
            throw CLIError("\(error)")
        }
    }
}
