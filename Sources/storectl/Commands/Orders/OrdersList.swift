import ArgumentParser
import Store

struct OrdersList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List every order, by id, with its exact total.")

    @OptionGroup var store: StoreOptions
    @Flag(help: "Print a JSON array of feed-shaped orders, each with its total.") var json = false

    func run() async throws {
        let orders = try await store.withStore(.existing) { try await $0.orders.fetchAll() }
        if json { return Output.printJSON(.array(orders.map { $0.jsonValue(includingTotal: true) })) }
        var table = Table("ID", "PLACED AT", "ITEMS", "TOTAL", rightAligned: [2, 3])
        for order in orders {
            table.append(order.id, Timestamp.format(order.placedAt), String(order.items.count), try order.total.description)
        }
        Output.print(table.render())
    }
}
