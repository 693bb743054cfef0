import ArgumentParser
import Foundation
import Store

struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Reconcile the store with a JSON feed from a file or an http(s) URL; see its history.",
        subcommands: [SyncRunCommand.self, SyncHistoryCommand.self],
        defaultSubcommand: SyncRunCommand.self
    )
}

/// `storectl sync SOURCE`: the default subcommand of `sync`, so `storectl sync history` stays free.
struct SyncRunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Reconcile the store with a JSON feed from a file or an http(s) URL.",
        discussion: """
            Exit status: 0 applied, up to date or dry run; 1 the sync failed and the store is unchanged \
            (invalid feed, network, disk); 3 the records were applied but some images failed to \
            download (they are retried next sync); 64 bad arguments.
            A bearer token for the feed's server is read from $STORECTL_FEED_TOKEN; it is never printed.
            """
    )

    static let imagesFailedExitCode: Int32 = 3

    @OptionGroup var store: StoreOptions
    @Argument(help: "A feed file path or an http(s) URL.") var source: String
    @Option(help: "keep-existing (default), prefer-remote or three-way.") var policy: SyncPolicy = .keepExisting
    @Flag(name: .customLong("dry-run"), help: "Compute the report; write nothing.") var dryRun = false
    @Flag(help: "Fetch every page unconditionally and reconcile (implied by a policy other than the last sync's).")
    var force = false
    @Flag(help: "Print the report as JSON.") var json = false
    @Flag(help: "No progress, only the result.") var quiet = false
    @Option(name: .customLong("max-bytes"), help: ArgumentHelp("The most bytes read per page (default 256MiB).", valueName: "size"))
    var maxBytes: String?
    @Option(help: "Seconds an HTTP request may wait for data, retries included: no retry starts after that (default 30).")
    var timeout: Int = 30

    func validate() throws {
        _ = try FeedSource(source)
        if let maxBytes { _ = try ImageCacheOptions.parseSize(maxBytes, name: "--max-bytes") }
        if timeout < 1 { throw ValidationError("--timeout: must be at least 1 second") }
    }

    func run() async throws {
        let feedSource: FeedSource
        do { feedSource = try FeedSource(source) } catch { throw ValidationError("\(error)") }
        var options = SyncOptions(policy: policy, dryRun: dryRun)
        options.force = force
        if let maxBytes { options.maximumBytes = try ImageCacheOptions.parseSize(maxBytes, name: "--max-bytes") }
        options.timeout = .seconds(timeout)
        options.bearerToken = ProcessInfo.processInfo.environment["STORECTL_FEED_TOKEN"]
        let progress = ProgressLine(enabled: !quiet && isatty(STDERR_FILENO) == 1)
        options.progress = { progress.show($0) }

        let opened = try await store.open()
        let report: SyncReport
        do {
            report = try await opened.sync(from: feedSource, options: options)
        } catch {
            progress.finish()
            // Names the store's file too: a disk error (full, read-only, I/O) is about it, not the feed.
            throw CLIError("sync from \(feedSource) into \(store.resolvedPath) failed; the store is unchanged:\n\(error)")
        }
        progress.finish()
        if json {
            Output.printJSON(report.jsonValue)
        } else {
            Output.print(Self.render(report))
        }
        if report.images.failed > 0 {
            for failure in report.imageFailures { Output.printError("image \(failure.url): \(failure.reason)") }
            throw ExitCode(Self.imagesFailedExitCode)
        }
    }

    static func render(_ report: SyncReport) -> String {
        var lines = ["\(report.source): \(report.status.rawValue) (\(report.policy.rawValue))"]
        guard report.status != .upToDate else { return lines[0] }
        var table = Table("KIND", "INSERTED", "UPDATED", "KEPT", "UNCHANGED", "DELETED", rightAligned: [1, 2, 3, 4, 5])
        for (name, counts) in [("frameworks", report.frameworks), ("orders", report.orders), ("events", report.events)] {
            table.append(name, String(counts.inserted), String(counts.updated), String(counts.kept),
                         String(counts.unchanged), String(counts.deleted))
        }
        lines.append(table.render())
        let images = report.images
        lines.append("images: \(images.stored) stored, \(images.alreadyCached) already cached, \(images.downloaded) downloaded, "
                     + "\(images.failed) failed, \(images.deleted) deleted")
        for conflict in report.conflicts { lines.append("conflict: \(conflict.kind) '\(conflict.key)' changed on both sides; kept local") }
        return lines.joined(separator: "\n")
    }
}

extension SyncPolicy: ExpressibleByArgument {}
