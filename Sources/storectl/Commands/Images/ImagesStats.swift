import ArgumentParser
import Store

struct ImagesStats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "stats", abstract: "Count, total bytes and budget of the cache.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var cache: ImageCacheOptions
    @Flag(help: "Print {count, totalBytes, budgetBytes} as JSON.") var json = false

    func run() async throws {
        let stats = try await store.withStore(.existing, configure: cache.configure) { try await $0.images.stats() }
        if json {
            return Output.printJSON(
                .object([
                    "count": .integer(stats.count), "totalBytes": .integer(stats.totalBytes),
                    "budgetBytes": .integer(stats.budgetBytes),
                ]))
        }
        // In Double: totalBytes * 100 overflowed Int for a total near 2^63 / 100.
        let percent =
            stats.budgetBytes == 0 ? 0 : Int((Double(stats.totalBytes) * 100 / Double(stats.budgetBytes)).rounded(.down))
        Output.print("images: \(stats.count)\nbytes:  \(stats.totalBytes) of \(stats.budgetBytes) (\(percent)%)")
    }
}
