import ArgumentParser
import Store

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending migrations (or list them with --dry-run).",
        subcommands: [MigrateStatusCommand.self]
    )

    @OptionGroup var store: StoreOptions
    @Flag(help: "List the migrations that would be applied; change nothing.")
    var dryRun = false

    func run() async throws {
        let path = store.resolvedPath
        if dryRun {
            let pending = try await store.withStore(.inspecting, configure: { $0.migrateOnOpen = false }) {
                try await $0.pendingMigrations()
            }
            if pending.isEmpty { return Output.print("\(path): up to date; nothing to apply") }
            for status in pending { Output.print("would apply \(identifier(status))") }
        } else {
            let applied = try await store.withStore(.creating, configure: { $0.migrateOnOpen = false }) {
                try await $0.migrate()
            }
            if applied.isEmpty { return Output.print("\(path): up to date; nothing to apply") }
            for migration in applied { Output.print("applied \(migration.identifier)") }
        }
    }
}

func identifier(_ status: MigrationStatus) -> String {
    let file = Migration(version: status.version, name: status.name, sql: "").identifier
    return status.owner.map { "\($0)/\(file)" } ?? file
}
