import ArgumentParser
import Foundation
import Store

struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write the whole store as a version-1 feed (stdout or --out).")

    @OptionGroup var store: StoreOptions
    @Option(help: "Write to this file instead of stdout.") var out: String?
    @Flag(name: .customLong("no-image-data"), help: "Leave out image bytes (urls and content types only).") var noImageData = false

    func run() async throws {
        let opened = try await store.open()
        let feed = try await withStoreErrors(store.resolvedPath) { try await opened.exportFeed(includingImageData: !noImageData) }
        guard let out else { return Output.writeRaw(Data(feed.utf8)) }
        do {
            try Data(feed.utf8).write(to: URL(fileURLWithPath: out), options: .atomic)
        } catch {
            throw CLIError("\(out): cannot write: \(error.localizedDescription)")
        }
    }
}
