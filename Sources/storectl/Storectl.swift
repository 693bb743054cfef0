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
            ImagesCommand.self, ExportCommand.self, SyncCommand.self, WatchCommand.self,
        ]
    )

    @OptionGroup var store: StoreOptions
}
