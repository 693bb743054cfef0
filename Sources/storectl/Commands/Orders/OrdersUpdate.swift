import ArgumentParser
import Foundation
import Store

struct OrdersUpdate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Change when an existing order was placed, or replace its items.",
        discussion: "Each --item is NAME:PRICE:AISLE[:QTY], as for add; the items given replace all of the order's items."
    )

    @OptionGroup var store: StoreOptions
    @Argument(help: "The order's id.") var id: String
    @Option(
        name: .customLong("placed-at"), help: ArgumentHelp("When it was placed.", valueName: "RFC3339"),
        transform: RFC3339Time.parse)
    var placedAt: RFC3339Time?
    @Option(
        name: .customLong("item"),
        help: ArgumentHelp(
            #"An item: NAME:PRICE:AISLE[:QTY] (\: for a colon in NAME, \\ for a backslash); repeat for more."#, valueName: "item")
    )
    var items: [OrderItemArgument] = []

    func validate() throws {
        if placedAt == nil && items.isEmpty {
            throw ValidationError("nothing to update: give --placed-at, or --item NAME:PRICE:AISLE[:QTY] (repeatable)")
        }
        let parsed = try OrderItemArgument.items(items)
        if !parsed.isEmpty { try OrderItemArgument.checkTotal(of: parsed) }
    }

    func run() async throws {
        let (id, date, parsed) = (id, placedAt?.date, try OrderItemArgument.items(items))
        let order = try await store.withStore(.existing) { opened in
            // Read and write in one transaction, so a concurrent change is not overwritten with stale fields.
            try await opened.write { db in
                // Read as stored, so that an order changed around the store into one a write would
                // refuse (no items, a negative aisle) can be repaired: the update checks the result.
                guard var order = try db.orders.find(id, validating: false) else {
                    throw StoreError.recordNotFound(kind: .order, key: id)
                }
                if let date { order.placedAt = date }
                if !parsed.isEmpty { order.items = parsed }
                try db.orders.update(order)
                return order
            }
        }
        Output.print("updated order \(id), total \(try order.total)")
    }
}
