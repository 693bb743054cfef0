import ArgumentParser
import Foundation
import Store

struct OrdersAdd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add an order; its id must be new.",
        discussion: """
            Each --item is NAME:PRICE:AISLE[:QTY], e.g. --item Milk:2.49:3:2: three or four fields split at each colon; \
            a colon in NAME is written \\: and a backslash \\\\ (--item 'Bolt M8\\:20:5.00:2'). PRICE is exact, at most two \
            decimals; prices, subtotals (PRICE x QTY) and the order's total are at most 10000000000.00, QTY 1 to 1000000.
            """
    )

    @OptionGroup var store: StoreOptions
    @Option(help: "A new id (1 to 200 characters).") var id: String
    @Option(
        name: .customLong("placed-at"), help: ArgumentHelp("When it was placed (default: now).", valueName: "RFC3339"),
        transform: RFC3339Time.parse)
    var placedAt: RFC3339Time?
    @Option(
        name: .customLong("item"),
        help: ArgumentHelp(
            #"An item: NAME:PRICE:AISLE[:QTY] (\: for a colon in NAME, \\ for a backslash); repeat for more."#, valueName: "item")
    )
    var items: [OrderItemArgument]

    func validate() throws {
        if let problem = RecordKind.idProblem(id) { throw ValidationError("--id: \(problem)") }
        try OrderItemArgument.checkTotal(of: try OrderItemArgument.items(items))
    }

    func run() async throws {
        let order = Order(id: id, placedAt: placedAt?.date ?? Date(), items: try OrderItemArgument.items(items))
        try await store.withStore(.creating) { try await $0.orders.insert(order) }
        Output.print("added order \(id), total \(try order.total)")
    }
}
