import ArgumentParser
import Foundation

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

    /// ArgumentParser's own main, plus closing every store the command opened, so no -wal or
    /// -shm file is left behind (see `OpenStores`), and SIGINT or SIGTERM cancelling the
    /// command's task (see `Interrupts`; `watch` handles them itself), after which a command
    /// that did not finish exits 128 + the signal's number.
    static func main() async {
        do {
            let command = try parseAsRoot()
            let interrupts = command is WatchCommand ? nil : await Interrupts.install()
            // A task of its own, so a signal can cancel it; detached, because the command (not
            // Sendable) is handed over to it whole and runs nowhere else.
            let running = Task.detached {
                var command = command
                if var asyncCommand = command as? AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            }
            interrupts?.onInterrupt { running.cancel() }
            let result = await running.result
            await OpenStores.shared.closeAll()
            // Interrupted: unless the command finished all the same (the signal came too late to
            // stop it), the exit status says so.
            if case .failure = result, let signal = interrupts?.receivedSignal { Foundation.exit(128 + signal) }
            try result.get()
        } catch {
            await OpenStores.shared.closeAll()
            exit(withError: error)
        }
    }
}
