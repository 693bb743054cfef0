import Foundation
import Testing

/// A command group run without its subcommand is a usage error, like `storectl` alone: help on
/// stderr, exit 64, nothing on stdout. `--help` is asked for, so it goes to stdout with exit 0.
@Suite("storectl command groups without a subcommand")
struct CommandGroupTests {
    @Test("a group alone: its help on stderr, exit 64", arguments: ["frameworks", "orders", "events", "images"])
    func groupAlone(group: String) async throws {
        let storectl = try Storectl()
        let result = try await storectl(group)
        #expect(result.status == exitUsage, "\(result)")
        #expect(result.stdout.isEmpty, "\(result)")
        #expect(result.stderr.contains("USAGE: storectl \(group) <subcommand>"), "\(result)")
        #expect(result.stderr.contains("SUBCOMMANDS:"), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: storectl.db), "no store is opened for a usage error")

        let help = try await storectl(group, "--help")
        #expect(help.status == 0, "\(help)")
        #expect(help.stdout.contains("USAGE: storectl \(group) <subcommand>"), "\(help)")
        #expect(help.stderr.isEmpty, "\(help)")
    }

    @Test("a group with store options but no subcommand is a usage error too")
    func groupWithOptions() async throws {
        let storectl = try Storectl()
        let result = try await storectl("--db", storectl.directory.file("x.sqlite"), "frameworks")
        expectFailure(result, status: exitUsage, mentioning: ["USAGE: storectl frameworks <subcommand>"])
        #expect(!FileManager.default.fileExists(atPath: storectl.directory.file("x.sqlite")))
    }

    /// ArgumentParser's `help` showed the root's help with exit 0 for a name it did not know, so a
    /// typo in a script (`storectl help framework`) passed as if answered.
    @Test("help with a command that does not exist is a usage error (64) naming it; a known one is help, exit 0")
    func helpForAnUnknownCommand() async throws {
        let storectl = try Storectl()
        let unknown = try await storectl("help", "framework")
        expectFailure(unknown, status: exitUsage, mentioning: ["'storectl framework' is not a command"])
        #expect(unknown.stdout.isEmpty, "\(unknown)")
        let nested = try await storectl("help", "frameworks", "lst")
        expectFailure(nested, status: exitUsage, mentioning: ["'storectl frameworks lst' is not a command"])
        let known = try await storectl("help", "frameworks", "list")
        #expect(known.status == 0, "\(known)")
        #expect(known.stdout.contains("USAGE: storectl frameworks list"), "\(known)")
        // Store options before or after `help` are not names; `help help` is ArgumentParser's.
        let db = storectl.directory.file("x.sqlite")
        expectFailure(
            try await storectl("--db", db, "help", "framework"), status: exitUsage,
            mentioning: ["'storectl framework' is not a command"])
        let withOption = try await storectl("help", "--db", db, "frameworks")
        #expect(withOption.status == 0, "\(withOption)")
        #expect(withOption.stdout.contains("USAGE: storectl frameworks <subcommand>"), "\(withOption)")
        #expect(try await storectl("help", "help").status == 0)
        #expect(!FileManager.default.fileExists(atPath: storectl.db), "no store is opened for help")
    }
}
