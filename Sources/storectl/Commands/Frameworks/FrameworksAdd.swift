import ArgumentParser
import Store

struct FrameworksAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a framework; its id must be new.")

    @OptionGroup var store: StoreOptions
    @Option(help: "A new id (1 to 200 characters).") var id: String
    @Option(help: "Display name.") var name: String
    @Option(name: .customLong("image-name"), help: "Image asset name.") var imageName: String
    @Option(help: "Web page URL.") var url: String
    @Option(help: "Description text.") var description: String

    func validate() throws {
        if let problem = RecordKind.idProblem(id) { throw ValidationError("--id: \(problem)") }
    }

    func run() async throws {
        let framework = Framework(id: id, name: name, imageName: imageName, urlString: url, description: description)
        try await store.withStore(.creating) { try await $0.frameworks.insert(framework) }
        Output.print("added framework \(id)")
    }
}
