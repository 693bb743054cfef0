import ArgumentParser
import Foundation
import Store

/// `--budget SIZE`: the image cache's byte budget.
struct ImageCacheOptions: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: .byteSize("The cache's byte budget", default: "$STORECTL_IMAGE_BUDGET, else 512MiB"))
    var budget: ByteSize?

    func validate() throws { _ = try resolvedBudget() }

    /// --budget, then STORECTL_IMAGE_BUDGET, else the library's default.
    func resolvedBudget() throws -> Int {
        if let budget { return budget.bytes }
        // Empty is a mistake (an unset variable in a script), as for every STORECTL_ variable.
        if let text = ProcessInfo.processInfo.environment["STORECTL_IMAGE_BUDGET"] {
            return try ByteSize(environment: text, name: "STORECTL_IMAGE_BUDGET").bytes
        }
        return Store.Configuration.defaultImageCacheBudget
    }

    /// Sets the budget of a store about to be opened (for `StoreOptions.withStore`'s `configure`).
    func configure(_ configuration: inout Store.Configuration) throws {
        configuration.imageCacheBudget = try resolvedBudget()
    }
}
