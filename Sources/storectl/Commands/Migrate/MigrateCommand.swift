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
        let opened = try await store.open(existing: dryRun) { $0.migrateOnOpen = false }
        try await withStoreErrors(path) {
            if dryRun {
                let pending = try await opened.pendingMigrations()
                if pending.isEmpty {
                    Output.print("\(path): up to date; nothing to apply")
                } else {
                    for status in pending { Output.print("would apply \(identifier(status))") }
                }
            } else {
                let applied = try await opened.migrate()
                if applied.isEmpty {
                    Output.print("\(path): up to date; nothing to apply")
                } else {
                    for migration in applied { Output.print("applied \(migration.identifier)") }
                }
            }
        }
    }
}

func identifier(_ status: MigrationStatus) -> String {
    let file = Migration(version: status.version, name: status.name, sql: "").identifier
    return status.owner.map { "\($0)/\(file)" } ?? file
}
