import ArgumentParser

struct SourcesCommand: CommandGroup {
    static let configuration = CommandConfiguration(
        commandName: "sources",
        abstract: "The feeds the store keeps sync state for: list them, forget those no longer synced from.",
        subcommands: [SourcesList.self, SourcesForget.self]
    )
}
