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
        let path = store.resolvedPath
        let opened = try await store.open(existing: true) { $0.migrateOnOpen = false }
        let statuses = try await withStoreErrors(path) { try await opened.migrationStatus() }
        if json {
            Output.printJSON(.array(statuses.map(\.jsonValue)))
            return
        }
        var table = Table("MIGRATION", "STATE", "APPLIED AT", "CHECKSUM")
        for status in statuses {
            table.append(identifier(status), status.state.rawValue,
                         status.appliedAt.map(Timestamp.format) ?? "-", String(status.checksum.prefix(16)))
        }
        Output.print(table.render())
    }
}
