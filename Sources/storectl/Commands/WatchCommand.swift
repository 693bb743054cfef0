import ArgumentParser
import Dispatch
import Foundation
import Store

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print one line per committed change, from this or any other process, until interrupted.",
        discussion: """
            Lines read `TIME OPERATION KIND KEY [DATES]`; with --json, one object per line: \
            {"kind", "key", "operation"} plus "dates" for events. Ctrl-C (SIGINT) or SIGTERM ends \
            it with status 0.

            Transactions pruned from the change log before the watch read them (it keeps the \
            last 10,000, at most 64 MiB of them; a watch suspended while more committed) are counted on stderr: \
            "missed N transactions before transaction T".

            Without --kind it prints every kind, an app's own kinds (e.g. `reminder`, logged by \
            the app's program) included: storectl does not know the app's types, only the names \
            its changes are logged under, which --kind also takes.
            """
    )

    @OptionGroup var store: StoreOptions
    @Option(
        help: ArgumentHelp(
            "Only this kind: framework, order, event, image, or an app's kind such as reminder "
                + "(a lowercase letter, then lowercase letters, digits or _).",
            valueName: "kind"))
    var kind: RecordKind?
    @Flag(help: "Print JSON lines.") var json = false

    /// `--kind frameworks` (the command group's name) was taken for an app's kind and matched
    /// nothing, silently, for as long as the watch ran.
    func validate() throws {
        if let kind, let meant = RecordKind.allCases.first(where: { $0.rawValue + "s" == kind.rawValue }) {
            throw ValidationError(
                "--kind: kinds are singular: '\(kind.rawValue)' matches nothing; did you mean \(meant.rawValue)?")
        }
    }

    func run() async throws {
        let kinds: Set<RecordKind>? = kind.map { [$0] }
        let (json, path) = (json, store.resolvedPath)
        // Not in exclusive locking mode on a full disk: it would keep every other program out
        // for as long as it watches.
        try await store.withStore(.existing, exclusiveOnFullDisk: false) { opened in
            // Subscribed, and its start read, before "watching" is printed: every change committed
            // after that line, by any process, is printed.
            let changes = await opened.changesFromNow(of: kinds)
            let watching = Task {
                for await batch in changes {
                    if batch.missedTransactions > 0 {
                        // On stderr: stdout stays one change per line, JSON or not.
                        Output.printError(
                            "missed \(batch.missedTransactions) transaction\(batch.missedTransactions == 1 ? "" : "s") before transaction \(batch.transaction): pruned from the change log (it keeps the last 10,000, at most 64 MiB of them) before this watch read them"
                        )
                    }
                    for change in batch.changes {
                        if json { Output.printJSON(change.jsonValue, pretty: false) } else { Output.print(Self.line(change)) }
                    }
                }
            }
            let signals = await Interrupts.catchSignals { _ in watching.cancel() }
            // The store's files, by identity (the store's own check, `Store.replacedFile`): a
            // store removed or replaced under the watch (rm, a restore from a backup) would
            // otherwise be watched forever without a word, the open connection reading the old,
            // unlinked file. A -wal or -shm deleted by hand made the watch, closing last with
            // the old WAL index, checkpoint it and delete the other processes' new -wal and -shm
            // (their confirmed writes lost); the store's close now skips the checkpoint then.
            // The store itself replaced (a backup restored over it): the close removes the old
            // file's -wal and -shm, which SQLite leaves at the path (see `Store.close()`).
            let guarding = Task { () -> String? in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    if Task.isCancelled { break }
                    if let replaced = opened.replacedFile {
                        watching.cancel()
                        return replaced
                    }
                }
                return nil
            }
            Output.printError("watching \(path) for changes; Ctrl-C to stop")
            await watching.value
            guarding.cancel()
            for signal in signals { signal.cancel() }
            if let replaced = await guarding.value {
                if replaced == path {
                    throw CLIError(
                        "the store \(path) was removed or replaced while watched (restore a backup only once the processes that have the store open are stopped); watch the store anew with a new watch"
                    )
                }
                throw CLIError(
                    "\(replaced) was removed or replaced while watched (never remove a store's files while it is open); watch the store anew with a new watch"
                )
            }
        }
    }

    static func line(_ change: Change) -> TerminalText {
        let dates = change.dates.isEmpty ? "" : " " + change.dates.map(\.description).joined(separator: ",")
        return "\(Timestamp.format(Date())) \(change.operation.rawValue) \(change.kind) \(change.key)\(dates)"
    }
}
