import ArgumentParser
import Store

struct ImagesDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Remove a URL from the cache.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The image's URL.") var url: String

    func run() async throws {
        let opened = try await store.open()
        try await withStoreErrors(store.resolvedPath) {
            guard try await opened.images.delete(url) else { throw StoreError.recordNotFound(kind: .image, key: url) }
        }
        Output.print("deleted image \(url)")
    }
}
