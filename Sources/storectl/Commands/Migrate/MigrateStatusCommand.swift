import ArgumentParser
import Store

struct MigrateStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every migration: applied, pending, modified or unknown."
    )

    @OptionGroup var store: StoreOptions
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        let statuses = try await store.withStore(.inspecting, configure: { $0.migrateOnOpen = false }) {
            try await $0.migrationStatus()
        }
        if json {
            Output.printJSON(.array(statuses.map(\.jsonValue)))
            return
        }
        var table = Table("MIGRATION", "STATE", "APPLIED AT", "CHECKSUM")
        for status in statuses {
            table.append(
                identifier(status), status.state.rawValue,
                status.appliedAt.map(Timestamp.format) ?? "-", String(status.checksum.prefix(16)))
        }
        Output.print(table.render())
    }
}
