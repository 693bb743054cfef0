import ArgumentParser
import Foundation
import Store

/// `storectl sync SOURCE`. It has no subcommands, so any SOURCE, a file named `history`
/// included, is a feed; the history is `storectl history`.
struct SyncRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Reconcile the store with a JSON feed from a file or an http(s) URL.",
        discussion: """
            Exit status: 0 applied, up to date or dry run; 1 the sync failed and the store is unchanged \
            but for the failure's history row (invalid feed, network, disk; a manifest older than the last one synced also marks the \
            source's cursor suspect, and says so); 3 the records were applied but some images were not stored \
            (failed to download, or larger than the whole image budget; retried next sync), or the \
            sync's last bookkeeping write failed (a full disk; the next sync reads the feed again), or the \
            report of a sync done could not be written to stdout (a dry run's: 1); 64 bad \
            arguments; 130 (SIGINT, Ctrl-C) or 143 (SIGTERM) interrupted: the store is unchanged, or, \
            if the signal came while images downloaded, the records are applied.
            SOURCE - reads the feed from stdin.
            A bearer token for the feed's server is read from $STORECTL_FEED_TOKEN; it is never printed.
            """
    )

    static let imagesFailedExitCode: Int32 = 3

    @OptionGroup var store: StoreOptions
    @OptionGroup var cache: ImageCacheOptions
    @Argument(
        help: "A feed file path, an http(s) URL, - for stdin, or a published folder (or its manifest.json, by path or URL).")
    var source: FeedSource
    @Option(help: "How records already in the store are reconciled with the feed's.") var policy: SyncPolicy = .keepExisting
    @Flag(name: .customLong("dry-run"), help: "Compute the report; write nothing.") var dryRun = false
    @Flag(
        help: "Fetch every page unconditionally and reconcile (implied by a policy, or record kinds, other than the last sync's)."
    )
    var force = false
    @Flag(help: "Print the report as JSON.") var json = false
    @Flag(help: "No progress, only the result.") var quiet = false
    @Option(
        name: .customLong("max-bytes"), parsing: .unconditional,
        help: .byteSize("The most bytes read per page or published file", default: "256MiB"))
    var maxBytes: ByteSize?
    @Option(
        name: .customLong("max-image-bytes"), parsing: .unconditional,
        help: .byteSize("The most bytes of one downloaded image", default: "32MiB", note: "a larger image is not stored (exit 3)")
    )
    var maxImageBytes: ByteSize?
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Whole seconds, 1 to 604800, an HTTP request may wait for data, retries included: no retry starts after that.",
            valueName: "seconds"))
    var timeout: Int = 30

    func validate() throws {
        // Set but empty: a secret that did not load. Sent as no token at all, it would fail as
        // an unexplained 401 (or not fail, against a server that needs none).
        if ProcessInfo.processInfo.environment["STORECTL_FEED_TOKEN"]?.isEmpty == true {
            throw ValidationError("STORECTL_FEED_TOKEN is set but empty: set the token, or unset it to send none")
        }
        if timeout < 1 { throw ValidationError("--timeout: must be at least 1 second") }
        // 0 made every sync fail, each with a history entry.
        if let maxBytes, maxBytes.bytes < 1 { throw ValidationError("--max-bytes: must be at least 1 byte") }
        if let maxImageBytes, maxImageBytes.bytes < 1 { throw ValidationError("--max-image-bytes: must be at least 1 byte") }
        // A week: longer is no timeout at all, and far longer overflowed (the whole exchange is
        // bounded by ten times it).
        if timeout > 604_800 { throw ValidationError("--timeout: must be at most 604800 seconds (a week)") }
    }

    func run() async throws {
        let source = source
        var options = SyncOptions(policy: policy, dryRun: dryRun)
        options.force = force
        if let maxBytes { options.maximumBytes = maxBytes.bytes }
        if let maxImageBytes { options.maximumImageBytes = maxImageBytes.bytes }
        options.timeout = .seconds(timeout)
        options.bearerToken = ProcessInfo.processInfo.environment["STORECTL_FEED_TOKEN"]
        let progress = ProgressLine(enabled: !quiet && isatty(STDERR_FILENO) == 1)
        options.progress = { progress.show($0) }

        // With --json every outcome is one JSON object on stdout; the message goes to stderr.
        // A dry run needs the store; a sync creates it, and removes it again if it fails.
        let (json, path) = (json, store.resolvedPath)
        var reported = false
        let report: SyncReport
        do {
            report = try await store.withStore(dryRun ? .existing : .creating, configure: cache.configure) { opened in
                do {
                    return try await opened.sync(from: source, options: options)
                } catch {
                    progress.finish()
                    reported = true
                    if error is CancellationError {
                        if json { Output.printJSON(.object(["status": .string("interrupted"), "source": .string(source.key)])) }
                        Output.printError("sync from \(source) into \(path) interrupted; the store is unchanged")
                        throw error
                    }
                    if json { Output.printJSON(Self.failure(source, error)) }
                    // Names the store's file too: a disk error (full, read-only, I/O) is about it, not the feed.
                    var reason: TerminalText = StoreOptions.fileProblem(error, path: path) ?? "\(error)"
                    if SyncOptions.isSizeLimit(error) {
                        reason = "\(reason)\n(the limit is --max-bytes, \(options.maximumBytes) bytes)"
                    }
                    // A stale manifest is refused with one write: its cursor marked suspect.
                    let kept =
                        (error as? ManifestError)?.cursorMarkedSuspect == true
                        ? "its records are unchanged, but the source's cursor is marked suspect, so the next sync reads the snapshot"
                        : "the store is unchanged"
                    throw CLIError("sync from \(source) into \(path) failed; \(kept):\n\(reason)")
                }
            }
        } catch {
            // The store could not be opened (or closed): said once, like any other failure.
            if json, !reported { Output.printJSON(Self.failure(source, error)) }
            throw error
        }
        progress.finish()
        // The sync is done (applied, or found up to date, and recorded) whether or not its
        // report can be written: a stdout that cannot be (closed, a full disk, a reader gone
        // where SIGPIPE is ignored) says so and exits 3, never 1, which says the store is
        // unchanged. A dry run did nothing but its report: it fails (1). A reader gone early
        // (`| head`) still ends storectl by SIGPIPE, as it ends any program.
        var reportUnwritten = false
        do {
            if json { try Self.writeJSON(report) } else { try Self.write(report) }
        } catch {
            if report.status == .dryRun {
                throw CLIError("sync from \(source) into \(path): the dry run's report could not be written: \(error)")
            }
            let done: TerminalText = report.status == .upToDate ? "is up to date" : "is applied"
            Output.printError("sync from \(source) into \(path) \(done), but its report could not be written: \(error)")
            reportUnwritten = true
        }
        for failure in report.imageFailures { Output.printError("image \(failure.url): \(failure.reason)") }
        if let unrecorded = report.unrecorded {
            Output.printError(
                "sync from \(source) into \(path): the records (and the images downloaded) are applied, but the sync's history, validators and cursor could not be written (the next sync reads the feed again):\n\(unrecorded)"
            )
        }
        if report.images.failed > 0 || report.unrecorded != nil || reportUnwritten {
            throw ExitCode(Self.imagesFailedExitCode)
        }
    }

    /// What `--json` prints for a sync that failed.
    static func failure(_ source: FeedSource, _ error: any Error) -> JSONValue {
        .object(["status": .string("failed"), "source": .string(source.key), "error": .string(String(describing: error))])
    }

    /// Writes the report to stdout as it is rendered, a line at a time: a three-way sync can
    /// report a conflict for every record (half a million, for a store of a million records
    /// half of which differ), and their lines made into one text, then its bytes, took 160 MB
    /// more than the sync itself (a peak of 332 MB, where keep-existing took 61 MB).
    static func write(_ report: SyncReport) throws {
        let output = BufferedOutput()
        try output.writeLine(render(report))
        if report.status != .upToDate {
            for conflict in report.conflicts {
                try output.writeLine("conflict: \(conflict.kind) '\(conflict.key)' changed on both sides; kept local")
            }
            if let published = published(report) { try output.writeLine(published) }
        }
        try output.flush()
    }

    /// Writes the report as JSON to stdout as it is serialized, element by element: the bytes
    /// `JSONWriter(pretty: true)` gives `report.jsonValue`, and a newline, as `write` writes
    /// the text (a write that fails throws `stdout: REASON`). Why: the report was printed
    /// whole, as a `JSONValue` tree, then one text, then its bytes, each holding every conflict
    /// again (see `write`).
    static func writeJSON(_ report: SyncReport) throws {
        let output = BufferedOutput()
        try report.writeJSON(JSONWriter(pretty: true)) { try output.write($0) }
        try output.write("\n")
        try output.flush()
    }

    /// The report but its conflicts and the published feed's line (see `write`).
    static func render(_ report: SyncReport) -> TerminalText {
        var lines: [TerminalText] = ["\(report.source): \(report.status.rawValue) (\(report.policy.rawValue))"]
        guard report.status != .upToDate else { return lines[0] }
        var table = Table("KIND", "INSERTED", "UPDATED", "KEPT", "UNCHANGED", "DELETED", rightAligned: [1, 2, 3, 4, 5])
        for (name, counts) in [("frameworks", report.frameworks), ("orders", report.orders), ("events", report.events)] {
            table.append(
                name, String(counts.inserted), String(counts.updated), String(counts.kept),
                String(counts.unchanged), String(counts.deleted))
        }
        lines.append(table.render())
        let images = report.images
        let downloads = "\(images.downloaded) downloaded, \(images.failed) failed, \(images.deleted) deleted"
        lines.append("images: \(images.stored) stored, \(images.alreadyCached) already cached, \(downloads)")
        return TerminalText(lines: lines)
    }

    /// The published feed's line, for a sync from a manifest.
    private static func published(_ report: SyncReport) -> TerminalText? {
        guard report.status != .upToDate, let published = report.published else { return nil }
        let moved =
            "\(published.filesFetched) file\(published.filesFetched == 1 ? "" : "s"), \(published.bytesFetched) byte\(published.bytesFetched == 1 ? "" : "s")"
        if let reason = published.fullSyncReason {
            return "published feed: full sync to \(published.toSequence) (\(reason)); \(moved)"
        }
        return "published feed: \(published.fromSequence ?? 0) -> \(published.toSequence); \(moved)"
    }
}
