import ArgumentParser
import Store

struct ImagesPrune: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune", abstract: "Evict least recently used images until the cache fits its budget.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var cache: ImageCacheOptions

    func run() async throws {
        let evicted = try await store.withStore(.existing, configure: cache.configure) { try await $0.images.prune() }
        for url in evicted { Output.print("evicted \(url)") }
        Output.print("evicted \(evicted.count) image\(evicted.count == 1 ? "" : "s")")
    }
}
