import ArgumentParser
import Store

struct ImagesList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List cached images (without their bytes).")

    @OptionGroup var store: StoreOptions
    @OptionGroup var cache: ImageCacheOptions
    @Flag(help: "Print a JSON array of {url, contentType (when known), size, storedAt, lastAccessAt}.") var json = false

    static let listing = RecordListing<CachedImageInfo>(
        table: Table("URL", "TYPE", "BYTES", "LAST ACCESS", rightAligned: [2], whole: [0]),
        cells: { [$0.url, $0.contentType ?? "-", String($0.size), Timestamp.format($0.lastAccessAt)] },
        json: \.jsonValue)

    func run() async throws {
        let json = json
        try await store.withStore(.existing, configure: cache.configure) { opened in
            try await Self.listing.print(from: opened, asJSON: json) { db, body in try db.images.fetchEachInfo(body) }
        }
    }
}
