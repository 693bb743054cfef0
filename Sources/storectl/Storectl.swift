import ArgumentParser

@main
struct Storectl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storectl",
        abstract: "Manage a Store: frameworks, orders, events, cached images, migrations and sync.",
        discussion: """
            The store is a SQLite file: --db PATH, else $STORECTL_DB, else \
            $XDG_DATA_HOME/storectl/store.sqlite, else ~/.local/share/storectl/store.sqlite. \
            It is created (mode 0600) and migrated on first use.
            """,
        version: "0.1.0",
        subcommands: [
            MigrateCommand.self, FrameworksCommand.self, OrdersCommand.self, EventsCommand.self,
            ImagesCommand.self, ExportCommand.self, SyncRunCommand.self, SyncHistoryCommand.self, WatchCommand.self,
        ]
    )

    @OptionGroup var store: StoreOptions

    /// ArgumentParser's own main, plus closing every store the command opened, so no -wal or
    /// -shm file is left behind (see `OpenStores`).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            await OpenStores.shared.closeAll()
        } catch {
            await OpenStores.shared.closeAll()
            exit(withError: error)
        }
    }
}
