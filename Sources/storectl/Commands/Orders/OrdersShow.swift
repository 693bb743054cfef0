import ArgumentParser
import Store

struct OrdersShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one order and its items.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The order's id.") var id: String
    @Flag(help: "Print the feed-shaped order, with its total, as JSON.") var json = false

    func run() async throws {
        let id = id
        let order = try await store.withStore(.existing) {
            guard let order = try await $0.orders.find(id) else { throw StoreError.recordNotFound(kind: .order, key: id) }
            return order
        }
        if json { return Output.printJSON(order.jsonValue(includingTotal: true)) }
        var table = Table("ITEM", "PRICE", "AISLE", "QTY", "SUBTOTAL", rightAligned: [1, 2, 3, 4])
        for item in order.items {
            table.append(
                item.itemName, item.price.description, String(item.aisle), String(item.quantity), try item.subtotal.description)
        }
        Output.print(
            "order \(order.id), placed at \(Timestamp.format(order.placedAt))\n\(table.render())\ntotal: \(try order.total)")
    }
}
