import Foundation
import Testing

/// Every error goes to stderr, stdout stays empty, the exit status is non-zero; usage errors
/// exit 64 (EX_USAGE).
@Suite("storectl errors")
struct ErrorOutputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var arguments: [String]
        var status: Int32?
        var mentions: [String]
        /// Commands run first (an "already exists" case needs its record).
        var setup: [[String]] = []
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let addFramework = [
        "frameworks", "add", "--id", "fw", "--name", "n", "--image-name", "i", "--url", "u", "--description", "d",
    ]
    static let addOrder = ["orders", "add", "--id", "o", "--item", "X:1:1"]
    static let addEvent = ["events", "add", "--id", "e", "--title", "t", "--date", "2026-01-01"]

    static let cases: [Case] = [
        // Records that do not exist.
        Case(arguments: ["frameworks", "show", "missing-fw"], status: 1, mentions: ["'missing-fw'"]),
        Case(arguments: ["frameworks", "show", "missing-fw", "--json"], status: 1, mentions: ["'missing-fw'"]),
        Case(arguments: ["frameworks", "delete", "missing-fw"], status: 1, mentions: ["'missing-fw'"]),
        Case(arguments: ["frameworks", "update", "missing-fw", "--name", "x"], status: 1, mentions: ["'missing-fw'"]),
        Case(arguments: ["orders", "show", "missing-o", "--json"], status: 1, mentions: ["'missing-o'"]),
        Case(arguments: ["orders", "total", "missing-o"], status: 1, mentions: ["'missing-o'"]),
        Case(arguments: ["orders", "delete", "missing-o"], status: 1, mentions: ["'missing-o'"]),
        Case(arguments: ["events", "show", "missing-e", "--json"], status: 1, mentions: ["'missing-e'"]),
        Case(arguments: ["events", "delete", "missing-e"], status: 1, mentions: ["'missing-e'"]),
        Case(arguments: ["images", "get", "missing-i"], status: 1, mentions: ["'missing-i'"]),
        Case(arguments: ["images", "delete", "missing-i"], status: 1, mentions: ["'missing-i'"]),
        // Records that already exist.
        Case(
            arguments: ErrorOutputTests.addFramework, status: 1, mentions: ["'fw'", "already exists"],
            setup: [ErrorOutputTests.addFramework]),
        Case(
            arguments: ErrorOutputTests.addOrder, status: 1, mentions: ["'o'", "already exists"],
            setup: [ErrorOutputTests.addOrder]),
        Case(
            arguments: ErrorOutputTests.addEvent, status: 1, mentions: ["'e'", "already exists"],
            setup: [ErrorOutputTests.addEvent]),
        // Usage errors.
        Case(arguments: ["frameworks", "update", "fw"], status: 64, mentions: ["nothing to update"]),
        Case(arguments: ["frameworks", "add", "--id", "x"], status: 64, mentions: ["--name"]),
        Case(arguments: ["orders", "add", "--id", "x", "--item", "A:1.234:1"], status: 64, mentions: ["--item", "1.234"]),
        Case(
            arguments: ["orders", "add", "--id", "x", "--item", "A:1:1", "--placed-at", "now"], status: 64,
            mentions: ["--placed-at"]),
        Case(
            arguments: ["events", "add", "--id", "x", "--title", "t", "--date", "2026-02-30"], status: 64,
            mentions: ["--date", "2026-02-30"]),
        Case(arguments: ["events", "dates", "--month", "2026-13"], status: 64, mentions: ["--month"]),
        Case(arguments: ["events", "calendar"], status: 64, mentions: ["month"]),
        Case(arguments: ["images", "stats", "--budget", "huge"], status: 64, mentions: ["--budget"]),
        Case(arguments: ["frameworks", "frobnicate"], status: 64, mentions: ["frobnicate"]),
        Case(arguments: ["frameworks", "list", "--no-such-flag"], status: 64, mentions: ["--no-such-flag"]),
        Case(arguments: ["nonsense"], status: 64, mentions: ["nonsense"]),
        // Files.
        Case(arguments: ["images", "put", "u", "no-such-file.png"], status: 1, mentions: ["no-such-file.png"]),
        Case(arguments: ["export", "--out", "no/such/dir/feed.json"], status: 1, mentions: ["no/such/dir/feed.json"]),
    ]

    @Test("errors go to stderr only, with a non-zero exit", arguments: ErrorOutputTests.cases)
    func errorGoesToStderr(_ testCase: Case) async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        for setup in testCase.setup { expectSuccess(try await storectl.run(setup)) }
        let result = try await storectl.run(testCase.arguments)
        expectFailure(result, status: testCase.status, mentioning: testCase.mentions)
        #expect(result.stderr.hasPrefix("Error: "), "\(result)")
    }

    @Test("--help and --version print to stdout and exit 0")
    func helpAndVersion() async throws {
        let storectl = try Storectl()
        let help = expectSuccess(try await storectl("--help"))
        for command in ["migrate", "frameworks", "orders", "events", "images", "export"] {
            #expect(help.stdout.contains(command), "\(command) in --help")
        }
        #expect(help.stderr.isEmpty)
        let version = expectSuccess(try await storectl("--version"))
        #expect(!version.output.isEmpty && version.output.first?.isNumber == true, "\(version)")
        let subcommandHelp = expectSuccess(try await storectl("orders", "add", "--help"))
        #expect(subcommandHelp.stdout.contains("NAME:PRICE:AISLE[:QTY]"))
        // Help needs no store: nothing was created.
        #expect(!FileManager.default.fileExists(atPath: storectl.db))
    }
}
