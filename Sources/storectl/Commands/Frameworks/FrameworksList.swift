import ArgumentParser
import Store

struct FrameworksList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List every framework, by id.")

    @OptionGroup var store: StoreOptions
    @Flag(help: "Print a JSON array of feed-shaped frameworks.") var json = false

    func run() async throws {
        let opened = try await store.open(existing: true)
        let frameworks = try await withStoreErrors(store.resolvedPath) { try await opened.frameworks.fetchAll() }
        if json { return Output.printJSON(.array(frameworks.map(\.jsonValue))) }
        var table = Table("ID", "NAME", "IMAGE NAME", "URL")
        for framework in frameworks { table.append(framework.id, framework.name, framework.imageName, framework.urlString) }
        Output.print(table.render())
    }
}
