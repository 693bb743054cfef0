import ArgumentParser

struct ImagesCommand: CommandGroup {
    static let configuration = CommandConfiguration(
        commandName: "images",
        abstract: "The image cache: put, get, list, delete, prune to the budget, stats.",
        subcommands: [ImagesPut.self, ImagesGet.self, ImagesList.self, ImagesDelete.self, ImagesPrune.self, ImagesStats.self]
    )
}
