import ArgumentParser
import Foundation
import Store

@main
struct Storectl: CommandGroup {
    static let configuration = CommandConfiguration(
        commandName: "storectl",
        abstract: "Manage a Store: frameworks, orders, events, cached images, migrations and sync.",
        discussion: """
            The store is a SQLite file: --db PATH, else $STORECTL_DB, else \
            $XDG_DATA_HOME/storectl/store.sqlite, else ~/.local/share/storectl/store.sqlite. \
            It is created (mode 0600) and migrated on first use. Only sync, the adds, images put \
            and migrate create a --db or $STORECTL_DB file that does not exist (and remove it \
            again if they fail); the other commands refuse it. Every command refuses a SQLite \
            file of another application, leaving it unchanged.
            """,
        version: Store.version,
        subcommands: [
            MigrateCommand.self, FrameworksCommand.self, OrdersCommand.self, EventsCommand.self,
            ImagesCommand.self, ExportCommand.self, PublishCommand.self, SyncRunCommand.self, SyncHistoryCommand.self,
            SourcesCommand.self, VacuumCommand.self,
            WatchCommand.self,
        ]
    )

    /// Accepted before the subcommand too: `storectl --db PATH frameworks list`.
    @OptionGroup var store: StoreOptions

    /// ArgumentParser's own main, plus two things it cannot do: SIGINT or SIGTERM cancel the
    /// command's task (see `Interrupts`; `watch` handles them itself), after which a command
    /// that did not finish exits 128 + the signal's number; and every error is written escaped
    /// (`exit(reporting:)`). Each command closes its store itself (`StoreOptions.withStore`).
    /// First of all, the descriptor limit is raised, or storectl refuses to run (`DescriptorLimit`).
    static func main() async {
        DescriptorLimit.raiseOrExit()
        do {
            try checkHelpTopic(Array(CommandLine.arguments.dropFirst()))
            let command = try parseAsRoot()
            let interrupts = command is WatchCommand ? nil : await Interrupts.install()
            // Before the command starts, so its first output file already pauses (tests only).
            interrupts?.pauseOutputFilesUntilInterruptedIfTesting()
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
            // The command is over. A spool folder still referenced now (a shared fetch whose
            // last reference goes a moment after its sync returned) would stay on disk: the
            // process ends without running deinitializers (a test saw one about once in nine
            // busy runs).
            Store.removeSpoolFolders()
            // Interrupted: unless the command finished all the same (the signal came too late to
            // stop it), the exit status says so.
            if case .failure = result, let signal = interrupts?.receivedSignal { Foundation.exit(128 + signal) }
            try result.get()
        } catch {
            exit(reporting: error)
        }
    }

    /// ArgumentParser's `help` subcommand shows the root's help and exits 0 for a command it does
    /// not know (`storectl help framework`), so a typo passed in a script; a usage error (64)
    /// instead, naming the command.
    static func checkHelpTopic(_ arguments: [String]) throws {
        // The names, without options and the values of the store's options (`--db x help`,
        // `help --db x frameworks`).
        var names: [String] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == "--" { break }
            if argument.hasPrefix("-") {
                if StoreOptions.namesTakingValues.contains(argument) { index += 1 }
            } else {
                names.append(argument)
            }
            index += 1
        }
        guard names.first == "help" else { return }
        var command: any ParsableCommand.Type = Self.self
        var path = configuration.commandName ?? "storectl"
        for name in names.dropFirst() {
            // `help help` is ArgumentParser's own: the help of `help`.
            if name == "help" && command == Self.self { return }
            let known = command.configuration.subcommands.first {
                $0._commandName == name || $0.configuration.aliases.contains(name)
            }
            guard let known else {
                throw ValidationError("'\(path) \(name)' is not a command; see '\(path) --help'")
            }
            command = known
            path += " " + name
        }
    }

    /// ArgumentParser's `exit(withError:)`, writing through `Output`, so what an error quotes
    /// reaches the terminal escaped: storectl's own errors (and the library's) as their text with
    /// every value escaped; help, the version and usage errors as ArgumentParser lays them out,
    /// in lines, with any other control character escaped, and a usage error's message (which
    /// may quote an argument) escaped whole, on one line.
    static func exit(reporting error: Error) -> Never {
        let code = exitCode(for: error)
        let message: TerminalText
        if String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") {
            let full = fullMessage(for: error), quoted = Self.message(for: error)
            if code != .success, !quoted.isEmpty, let range = full.range(of: quoted) {
                let (before, after) = (String(full[..<range.lowerBound]), String(full[range.upperBound...]))
                message = "\(TerminalText(formatted: before))\(quoted)\(TerminalText(formatted: after))"
            } else {
                message = TerminalText(formatted: full)
            }
        } else {
            message = "Error: \(error)"
        }
        if !message.text.isEmpty {
            if code == .success { Output.print(message) } else { Output.printError(message) }
        }
        Foundation.exit(code.rawValue)
    }
}
