import ArgumentParser
import Foundation
import Store

/// `storectl publish DIR`: the store as a published feed (version 2) in a folder.
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish the store into a folder as a version-2 feed: a manifest, a snapshot and change segments.",
        discussion: """
            Each publish appends one segment with what changed since the last one (nothing changed: \
            the folder is not touched); segments are merged and folded into new snapshots as they \
            grow. Serve the folder with any static HTTP server: every file but manifest.json is \
            immutable (Cache-Control: immutable); manifest.json must be revalidated (no-cache). \
            Clients sync from DIR/manifest.json (or its URL) and fetch only what changed. \
            Exit status: 0 published or unchanged; 1 failed (the folder still serves its previous state); \
            130 (SIGINT) or 143 (SIGTERM) interrupted (the folder still serves its previous state).
            """
    )

    @OptionGroup var store: StoreOptions
    @Argument(help: "The folder to publish into (created if missing).") var folder: String
    @Option(
        name: .customLong("grace-seconds"), parsing: .unconditional,
        help: "Seconds a file no manifest names any more is kept for clients mid-sync.")
    var graceSeconds: Int = 3600
    @Option(
        name: .customLong("page-size"), parsing: .unconditional,
        help: "Records per snapshot page (a page also ends at --page-bytes).") var pageSize: Int =
            10_000
    @Option(
        name: .customLong("page-bytes"), parsing: .unconditional,
        help: .byteSize(
            "The most bytes of a snapshot page, about", default: "32MiB", note: "a record larger than that has a page of its own")
    )
    var pageBytes: ByteSize?
    @Option(
        name: .customLong("segment-bytes"), parsing: .unconditional,
        help: .byteSize(
            "The most bytes of a change segment", default: "32MiB",
            note: "a publish whose segment would be larger writes a snapshot instead"))
    var segmentBytes: ByteSize?
    @Flag(help: "Print the report as JSON.") var json = false

    func validate() throws {
        if folder.isEmpty { throw ValidationError("DIR: the path is empty") }
        if graceSeconds < 0 { throw ValidationError("--grace-seconds: must not be negative") }
        if pageSize < 1 { throw ValidationError("--page-size: must be at least 1") }
        if let segmentBytes, segmentBytes.bytes < 1 { throw ValidationError("--segment-bytes: must be at least 1 byte") }
        if let pageBytes, pageBytes.bytes < 1 { throw ValidationError("--page-bytes: must be at least 1 byte") }
    }

    func run() async throws {
        #if DEBUG
            // Tests only (see `PublishLock.foundHeld`); a release build ignores the variable.
            if ProcessInfo.processInfo.environment["STORECTL_TEST_WAIT_FOR_PUBLISH_LOCK"] == "1" {
                PublishLock.foundHeld = { path in Output.printError("storectl test: waiting for the lock on \(path)") }
            }
        #endif
        var options = PublishOptions()
        options.gracePeriod = TimeInterval(graceSeconds)
        options.snapshotPageSize = pageSize
        if let segmentBytes { options.segmentBytes = segmentBytes.bytes }
        if let pageBytes { options.snapshotPageBytes = pageBytes.bytes }
        let url = URL(fileURLWithPath: folder)
        let report: PublishReport
        do {
            report = try await store.withStore(.existing) { try await $0.publish(to: url, options: options) }
        } catch is CancellationError {
            // Interrupted before its new manifest replaced the old one (the one atomic step):
            // clients still get the previous state, whole.
            Output.printError("publish into \(folder) interrupted; the folder keeps its previous manifest")
            throw CancellationError()
        }
        for stale in Self.stalePrecompressedManifests(in: url) {
            Output.printError(
                "warning: \(stale) is older than manifest.json: a server that serves precompressed files (nginx gzip_static, many CDNs) sends it instead to clients that accept its encoding, and they stay at the head it names; compress the manifest again after each publish, or remove that file"
            )
        }
        if json {
            var members: [String: JSONValue] = [
                "outcome": .string(report.outcome.rawValue), "generation": .string(report.generation),
                "head": .number(String(report.head)), "changes": .number(String(report.changes)),
                "filesWritten": .array(report.filesWritten.map(JSONValue.string)),
                "filesDeleted": .array(report.filesDeleted.map(JSONValue.string)),
                "filesInFolder": .number(String(report.filesInFolder)),
            ]
            if let reason = report.reason { members["reason"] = .string(reason) }
            Output.printJSON(.object(members.sorted { $0.key < $1.key }.map { JSONMember($0.key, $0.value) }))
            return
        }
        switch report.outcome {
        case .unchanged: Output.print("\(folder): unchanged at \(report.head) (nothing changed since the last publish)")
        case .segment:
            Output.print(
                "\(folder): published \(report.head) (\(Self.count(report.changes, "change")), \(Self.count(report.filesWritten.count, "file")) written)"
            )
        case .snapshot:
            Output.print(
                "\(folder): published \(report.head) as a snapshot (\(report.reason ?? "")), \(Self.count(report.filesWritten.count, "file")) written"
            )
        }
    }

    /// Precompressed copies of the manifest (`manifest.json.gz`, `.br`, `.zst`) older than it, by
    /// path. The publisher writes none and never deletes a file it did not write; such a copy,
    /// made once by an operator, is what nginx's `gzip_static` serves in the manifest's place,
    /// however old: clients read "up to date" at its head for good (FeedFormat.md, "Serving a
    /// published folder").
    static func stalePrecompressedManifests(in folder: URL) -> [String] {
        let manifest = folder.appendingPathComponent("manifest.json").path
        let modified = { (path: String) in
            (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        }
        guard let written = modified(manifest) else { return [] }
        return ["gz", "br", "zst"].compactMap { suffix in
            let copy = manifest + "." + suffix
            guard let copied = modified(copy), copied < written else { return nil }
            return copy
        }
    }

    /// "1 change", "2 changes".
    static func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
}
