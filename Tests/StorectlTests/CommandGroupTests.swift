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
}
