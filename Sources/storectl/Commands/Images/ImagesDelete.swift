import ArgumentParser
import Store

struct ImagesDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Remove a URL from the cache.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The image's URL.") var url: String

    func run() async throws {
        let url = url
        try await store.withStore(.existing) {
            guard try await $0.images.delete(url) else { throw StoreError.recordNotFound(kind: .image, key: url) }
        }
        Output.print("deleted image \(url)")
    }
}
