import ArgumentParser
import Store

struct FrameworksDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a framework.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The framework's id.") var id: String

    func run() async throws {
        let opened = try await store.open()
        try await withStoreErrors(store.resolvedPath) {
            guard try await opened.frameworks.delete(id) else { throw StoreError.recordNotFound(kind: .framework, key: id) }
        }
        Output.print("deleted framework \(id)")
    }
}
