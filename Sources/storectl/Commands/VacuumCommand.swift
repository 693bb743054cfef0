import ArgumentParser
import Foundation
import Store

struct VacuumCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vacuum",
        abstract: "Rebuild the store's file without its free pages (SQLite's VACUUM).",
        discussion: """
            SQLite reuses the pages deleted records leave free, but never gives them back: after \
            deleting most records (or evicting most images) the file keeps its size. Needs free \
            space for a copy of the store; other processes' writes wait for it. Prints the size \
            before and after.
            """)

    @OptionGroup var store: StoreOptions

    func run() async throws {
        let path = store.resolvedPath
        let (before, after) = try await store.withStore(.existing) { try await $0.vacuum() }
        Output.print("vacuumed \(path): \(Self.size(before)) -> \(Self.size(after))")
    }

    /// "38.5 MB", "4,096 bytes".
    static func size(_ bytes: Int) -> String {
        if bytes < 1_000_000 { return "\(bytes) bytes" }
        return String(format: "%.1f MB", Double(bytes) / 1_000_000)
    }
}
