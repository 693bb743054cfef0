import ArgumentParser
import Store

struct FrameworksUpdate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "update", abstract: "Change fields of an existing framework.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The framework's id.") var id: String
    @Option(help: "New display name.") var name: String?
    @Option(name: .customLong("image-name"), help: "New image asset name.") var imageName: String?
    @Option(help: "New web page URL.") var url: String?
    @Option(help: "New description text.") var description: String?

    func validate() throws {
        if name == nil && imageName == nil && url == nil && description == nil {
            throw ValidationError("nothing to update: give at least one of --name, --image-name, --url, --description")
        }
    }

    func run() async throws {
        let (id, name, imageName, url, description) = (id, name, imageName, url, description)
        try await store.withStore(.existing) { opened in
            // Read and write in one transaction, so a concurrent change is not overwritten with stale fields.
            try await opened.write { db in
                guard var framework = try db.frameworks.find(id) else {
                    throw StoreError.recordNotFound(kind: .framework, key: id)
                }
                if let name { framework.name = name }
                if let imageName { framework.imageName = imageName }
                if let url { framework.urlString = url }
                if let description { framework.description = description }
                try db.frameworks.update(framework)
            }
        }
        Output.print("updated framework \(id)")
    }
}
