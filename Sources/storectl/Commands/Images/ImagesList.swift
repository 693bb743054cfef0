import ArgumentParser
import Store

struct ImagesList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List cached images (without their bytes).")

    @OptionGroup var store: StoreOptions
    @OptionGroup var cache: ImageCacheOptions
    @Flag(help: "Print a JSON array of {url, contentType, size, storedAt, lastAccessAt}.") var json = false

    func run() async throws {
        let images = try await store.withStore(.existing, configure: cache.configure) { try await $0.images.list() }
        if json { return Output.printJSON(.array(images.map(\.jsonValue))) }
        var table = Table("URL", "TYPE", "BYTES", "LAST ACCESS", rightAligned: [2])
        for image in images {
            table.append(image.url, image.contentType ?? "-", String(image.size), Timestamp.format(image.lastAccessAt))
        }
        Output.print(table.render())
    }
}
