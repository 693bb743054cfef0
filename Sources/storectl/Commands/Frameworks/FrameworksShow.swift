import ArgumentParser
import Store

struct FrameworksShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one framework.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The framework's id.") var id: String
    @Flag(help: "Print the feed-shaped framework as JSON.") var json = false

    func run() async throws {
        let id = id
        let framework = try await store.withStore(.existing) {
            guard let framework = try await $0.frameworks.find(id) else {
                throw StoreError.recordNotFound(kind: .framework, key: id)
            }
            return framework
        }
        if json { return Output.printJSON(framework.jsonValue) }
        Output.print(
            """
            id:          \(framework.id)
            name:        \(framework.name)
            imageName:   \(framework.imageName)
            urlString:   \(framework.urlString)
            description: \(framework.description)
            """)
    }
}
