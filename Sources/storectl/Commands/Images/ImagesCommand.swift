import ArgumentParser
import Foundation
import Store

struct ImagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "images",
        abstract: "The image cache: put, get, list, delete, prune to the budget, stats.",
        subcommands: [ImagesPut.self, ImagesGet.self, ImagesList.self, ImagesDelete.self, ImagesPrune.self, ImagesStats.self]
    )
}

/// `--budget`: the cache's byte budget.
struct ImageCacheOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "The cache's byte budget: bytes, or with KiB, MiB or GiB (default: $STORECTL_IMAGE_BUDGET, else 512MiB).",
        valueName: "size"))
    var budget: String?

    func validate() throws { _ = try resolvedBudget() }

    func resolvedBudget() throws -> Int {
        if let budget { return try Self.parseSize(budget, name: "--budget") }
        if let text = ProcessInfo.processInfo.environment["STORECTL_IMAGE_BUDGET"], !text.isEmpty {
            return try Self.parseSize(text, name: "STORECTL_IMAGE_BUDGET")
        }
        return Store.Configuration.defaultImageCacheBudget
    }

    static func parseSize(_ text: String, name: String) throws -> Int {
        let units: [(String, Int)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1), ("", 1)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            if let value = Int(text.dropLast(suffix.count)), value >= 0, value <= Int.max / factor { return value * factor }
        }
        throw ValidationError("\(name): '\(text)' is not a size such as 1048576, 512KiB or 64MiB")
    }

    /// `existing`: see `StoreOptions.open(existing:configure:)`.
    func open(_ store: StoreOptions, existing: Bool = false) async throws -> Store {
        let budget = try resolvedBudget()
        return try await store.open(existing: existing) { $0.imageCacheBudget = budget }
    }
}
