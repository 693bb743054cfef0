import ArgumentParser

struct FrameworksCommand: CommandGroup {
    static let configuration = CommandConfiguration(
        commandName: "frameworks",
        abstract: "List, show, add, update and delete frameworks.",
        subcommands: [FrameworksList.self, FrameworksShow.self, FrameworksAdd.self, FrameworksUpdate.self, FrameworksDelete.self]
    )
}
