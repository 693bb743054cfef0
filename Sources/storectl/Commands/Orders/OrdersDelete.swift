import ArgumentParser
import Store

struct OrdersDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an order and its items.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The order's id.") var id: String

    func run() async throws {
        let id = id
        try await store.withStore(.existing) {
            guard try await $0.orders.delete(id) else { throw StoreError.recordNotFound(kind: .order, key: id) }
        }
        Output.print("deleted order \(id)")
    }
}
