import ArgumentParser
import Store

struct SyncHistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "history", abstract: "Recent syncs, newest first.")

    @OptionGroup var store: StoreOptions
    @Flag(help: "Print a JSON array.") var json = false
    @Option(parsing: .unconditional, help: "How many to show.") var limit: Int = 20

    func validate() throws {
        // SQLite reads LIMIT -1 as no limit: every entry was shown.
        if limit < 1 { throw ValidationError("--limit: must be at least 1") }
    }

    func run() async throws {
        let limit = limit
        let entries = try await store.withStore(.existing) { try await $0.syncHistory(limit: limit) }
        if json { return Output.printJSON(.array(entries.map(\.jsonValue))) }
        var table = Table("STARTED AT", "SOURCE", "POLICY", "OUTCOME", "DETAIL")
        for entry in entries {
            table.append(
                Timestamp.format(entry.startedAt), entry.source, entry.policy.rawValue, entry.outcome.rawValue,
                entry.error ?? entry.reportJSON ?? "")
        }
        Output.print(table.render())
    }
}
