import ArgumentParser
import Foundation
import Store

struct ImagesGet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Write the cached bytes for a URL to a file or to stdout.")

    @OptionGroup var store: StoreOptions
    @OptionGroup var cache: ImageCacheOptions
    @Argument(help: "The image's URL.") var url: String
    @Option(help: "Write to this file instead of stdout; - is stdout.") var out: String?

    func validate() throws {
        if out?.isEmpty == true { throw ValidationError("--out: the path is empty") }
        if let out, out != "-", OutputFile.isStore(out, storePath: store.resolvedPath) {
            throw ValidationError(
                "--out \(out): that is the store \(store.resolvedPath) (or one of its files); choose another path")
        }
    }

    func run() async throws {
        let url = url
        // Before the read, which marks the image used: a path that cannot be written fails
        // the command with the store unchanged.
        if let out, out != "-" {
            do {
                try OutputFile.checkWritable(out)
            } catch {
                throw CLIError("\(error)")
            }
        }
        let image = try await store.withStore(.existing, configure: cache.configure) {
            guard let image = try await $0.images.get(url) else { throw StoreError.recordNotFound(kind: .image, key: url) }
            return image
        }
        guard let out, out != "-" else { return Output.writeRaw(image.data) }
        do {
            try OutputFile.write(image.data, to: out, followingLinks: true)
        } catch let error as CancellationError {
            throw error
        } catch {
            throw CLIError("\(error)")
        }
        Output.printError("wrote \(image.data.count) bytes to \(out)")
    }
}
