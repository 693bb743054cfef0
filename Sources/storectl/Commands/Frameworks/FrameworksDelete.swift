import ArgumentParser
import Store

struct FrameworksDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete a framework.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The framework's id.") var id: String

    func run() async throws {
        let id = id
        try await store.withStore(.existing) {
            guard try await $0.frameworks.delete(id) else { throw StoreError.recordNotFound(kind: .framework, key: id) }
        }
        Output.print("deleted framework \(id)")
    }
}
