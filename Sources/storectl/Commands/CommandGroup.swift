import ArgumentParser

/// A command that only groups subcommands (`storectl frameworks`, `storectl images`, ...), and
/// `storectl` itself. Run without a subcommand it is a usage error: its help on stderr, exit 64,
/// as for any other missing argument (`--help` still prints the help on stdout and exits 0).
protocol CommandGroup: AsyncParsableCommand {}

extension CommandGroup {
    func run() async throws {
        Output.printError(TerminalText(formatted: Storectl.helpMessage(for: Self.self)))
        throw ExitCode.validationFailure
    }
}
