import Foundation
import StoreTestSupport
import Testing

/// Whether strace is installed and may trace here (a container may forbid ptrace).
private let straceWorks =
    ProcessRunner.which("strace").map { ProcessRunner.runBlocking($0, ["-o", "/dev/null", "true"]) == 0 } ?? false

/// `storectl --durability normal|full` and `STORECTL_DURABILITY`.
@Suite("storectl --durability")
struct DurabilityTests {
    private static let add = [
        "frameworks", "add", "--name", "A", "--image-name", "a", "--url", "https://a", "--description", "d", "--id",
    ]

    @Test("--durability normal|full, before or after the subcommand, and STORECTL_DURABILITY, are accepted and write")
    func accepted() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl.run(["--durability", "full"] + Self.add + ["a"]))
        expectSuccess(try await storectl.run(["--durability", "normal"] + Self.add + ["b"]))
        expectSuccess(try await storectl.run(Self.add + ["c", "--durability", "full"]))
        expectSuccess(try await storectl.run(Self.add + ["d"], environment: ["STORECTL_DURABILITY": "normal"]))
        expectSuccess(try await storectl.run(Self.add + ["e"], environment: ["STORECTL_DURABILITY": "full"]))
        let listed = expectSuccess(try await storectl("frameworks", "list", "--json", "--durability", "normal"))
        for id in ["a", "b", "c", "d", "e"] {
            #expect(listed.stdout.contains("\"id\":\"\(id)\"") || listed.stdout.contains("\"id\": \"\(id)\""), "\(listed)")
        }
    }

    @Test("a bad --durability or STORECTL_DURABILITY is a usage error (64), naming the option")
    func malformed() async throws {
        let storectl = try Storectl()
        for value in ["fast", "", "off", "FULL "] {
            expectFailure(
                try await storectl("--durability", value, "frameworks", "list"), status: exitUsage, mentioning: ["--durability"])
            expectFailure(
                try await storectl("frameworks", "list", environment: ["STORECTL_DURABILITY": value]), status: exitUsage,
                mentioning: ["STORECTL_DURABILITY"])
        }
        // The option wins over the variable, a bad variable included.
        expectSuccess(try await storectl("migrate", "--durability", "full", environment: ["STORECTL_DURABILITY": "fast"]))
    }

    /// The syncs (fsync, fdatasync) one `frameworks add` makes on a migrated store, counted by
    /// strace. NORMAL syncs only when the store is checkpointed on close; FULL also syncs the WAL
    /// at the commit, so the mode in force shows in the count.
    private static func syncs(_ storectl: Storectl, id: String, options: [String], environment: [String: String?] = [:])
        async throws -> Int
    {
        let trace = storectl.directory.file("strace-\(id).txt")
        let script = "exec strace -f -qq -e trace=fsync,fdatasync -o \"$TRACE\" \"$0\" \"$@\""
        let result = try await storectl.run(
            ["-c", script, try Storectl.executableURL().path] + options + add + [id],
            environment: environment.merging(["TRACE": trace]) { $1 }, shell: true)
        expectSuccess(result)
        let text = try String(contentsOfFile: trace, encoding: .utf8)
        return text.split(separator: "\n").filter { $0.contains("sync(") && $0.contains("= 0") }.count
    }

    @Test(
        "the mode reaches the writer connection: under full a commit syncs, under normal it does not",
        .enabled(if: straceWorks, "needs strace, allowed to trace (ptrace) here"))
    func modeInForce() async throws {
        let storectl = try Storectl()
        expectSuccess(try await storectl("migrate"))
        let normal = try await Self.syncs(storectl, id: "n", options: ["--durability", "normal"])
        let full = try await Self.syncs(storectl, id: "f", options: ["--durability", "full"])
        let byDefault = try await Self.syncs(storectl, id: "d", options: [])
        let normalByVariable = try await Self.syncs(
            storectl, id: "v", options: [], environment: ["STORECTL_DURABILITY": "normal"])
        let fullByVariable = try await Self.syncs(storectl, id: "w", options: [], environment: ["STORECTL_DURABILITY": "full"])
        #expect(full > normal, "full: \(full) syncs, normal: \(normal)")
        #expect(byDefault == full, "default: \(byDefault) syncs, full: \(full)")
        #expect(
            normalByVariable == normal, "STORECTL_DURABILITY=normal: \(normalByVariable) syncs, --durability normal: \(normal)")
        #expect(fullByVariable == full, "STORECTL_DURABILITY=full: \(fullByVariable) syncs, --durability full: \(full)")
    }
}
