import ArgumentParser
import Store

struct FrameworksList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List every framework, by id.")

    @OptionGroup var store: StoreOptions
    @Flag(help: "Print a JSON array of feed-shaped frameworks.") var json = false

    func run() async throws {
        let frameworks = try await store.withStore(.existing) { try await $0.frameworks.fetchAll() }
        if json { return Output.printJSON(.array(frameworks.map(\.jsonValue))) }
        var table = Table("ID", "NAME", "IMAGE NAME", "URL")
        for framework in frameworks { table.append(framework.id, framework.name, framework.imageName, framework.urlString) }
        Output.print(table.render())
    }
}
