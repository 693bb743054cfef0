import ArgumentParser

struct OrdersCommand: CommandGroup {
    static let configuration = CommandConfiguration(
        commandName: "orders",
        abstract: "List, show, add, update, total and delete orders.",
        subcommands: [OrdersList.self, OrdersShow.self, OrdersAdd.self, OrdersUpdate.self, OrdersTotal.self, OrdersDelete.self]
    )
}
