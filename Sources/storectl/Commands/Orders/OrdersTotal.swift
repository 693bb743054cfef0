import ArgumentParser
import Store

struct OrdersTotal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "total", abstract: "Print an order's exact total, e.g. 4.98.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The order's id.") var id: String

    func run() async throws {
        let opened = try await store.open(existing: true)
        let total = try await withStoreErrors(store.resolvedPath) {
            guard let total = try await opened.orders.total(id) else { throw StoreError.recordNotFound(kind: .order, key: id) }
            return total
        }
        Output.print("\(total)")
    }
}
