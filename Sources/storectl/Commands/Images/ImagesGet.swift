import ArgumentParser
import Foundation
import Store

struct ImagesGet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Write the cached bytes for a URL to a file or to stdout.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var cache: ImageCacheOptions
    @Argument(help: "The image's URL.") var url: String
    @Option(help: "Write to this file instead of stdout.") var out: String?

    func run() async throws {
        let opened = try await cache.open(store, existing: true)
        let image = try await withStoreErrors(store.resolvedPath) {
            guard let image = try await opened.images.get(url) else { throw StoreError.recordNotFound(kind: .image, key: url) }
            return image
        }
        guard let out else { return Output.writeRaw(image.data) }
        do {
            try image.data.write(to: URL(fileURLWithPath: out), options: .atomic)
        } catch {
            throw CLIError("\(out): cannot write: \(error.localizedDescription)")
        }
        Output.printError("wrote \(image.data.count) bytes to \(out)")
    }
}
