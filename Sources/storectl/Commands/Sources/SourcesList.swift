import ArgumentParser
import Store

struct SourcesList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Each source synced from, by key (an absolute path, or a URL without credentials).",
        discussion: """
            A sync from a new path starts a new source, with a hash of every record it received: \
            syncing a feed downloaded to a new temporary file each time keeps one such copy per run. \
            Sync from a stable path, or forget the old ones (storectl sources forget).
            """)

    @OptionGroup var store: StoreOptions
    @Flag(help: "Print a JSON array.") var json = false

    func run() async throws {
        let sources = try await store.withStore(.existing) { try await $0.syncSources() }
        if json { return Output.printJSON(.array(sources.map(\.jsonValue))) }
        var table = Table("SOURCE", "LAST SYNCED AT", "POLICY", "RECORDS", rightAligned: [3])
        for source in sources {
            table.append(
                source.source, source.lastSyncedAt.map(Timestamp.format) ?? "", source.policy?.rawValue ?? "",
                String(source.receivedRecords))
        }
        Output.print(table.render())
    }
}
