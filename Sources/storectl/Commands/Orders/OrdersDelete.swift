import ArgumentParser
import Store

struct OrdersDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an order and its items.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The order's id.") var id: String

    func run() async throws {
        let opened = try await store.open()
        try await withStoreErrors(store.resolvedPath) {
            guard try await opened.orders.delete(id) else { throw StoreError.recordNotFound(kind: .order, key: id) }
        }
        Output.print("deleted order \(id)")
    }
}
