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
    @Option(name: .customLong("placed-at"), help: "When it was placed, RFC 3339.") var placedAt: String?
    @Option(name: .customLong("item"), help: ArgumentHelp("An item: NAME:PRICE:AISLE[:QTY]; repeat for more.", valueName: "item"))
    var items: [String] = []

    func validate() throws {
        if placedAt == nil && items.isEmpty {
            throw ValidationError("nothing to update: give --placed-at, or --item NAME:PRICE:AISLE[:QTY] (repeatable)")
        }
        let parsed = try items.enumerated().map { try OrdersAdd.parseItem($1, index: $0) }
        if !parsed.isEmpty { try OrdersAdd.checkTotal(of: parsed) }
        if let placedAt, Timestamp.parse(placedAt) == nil {
            throw ValidationError("--placed-at: '\(placedAt)' is not an RFC 3339 timestamp such as 2026-11-20T09:30:00Z")
        }
    }

    func run() async throws {
        let parsed = try items.enumerated().map { try OrdersAdd.parseItem($1, index: $0) }
        let date = placedAt.flatMap(Timestamp.parse)
        let opened = try await store.open()
        let id = id
        let order = try await withStoreErrors(store.resolvedPath) {
            // Read and write in one transaction, so a concurrent change is not overwritten with stale fields.
            try await opened.write { db in
                guard var order = try db.orders.find(id) else { throw StoreError.recordNotFound(kind: .order, key: id) }
                if let date { order.placedAt = date }
                if !parsed.isEmpty { order.items = parsed }
                try db.orders.update(order)
                return order
            }
        }
        Output.print("updated order \(id), total \(try order.total)")
    }
}
