import ArgumentParser
import Store

struct OrdersTotal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "total", abstract: "Print an order's exact total, e.g. 4.98.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The order's id.") var id: String

    func run() async throws {
        let id = id
        let total = try await store.withStore(.existing) {
            guard let total = try await $0.orders.total(id) else { throw StoreError.recordNotFound(kind: .order, key: id) }
            return total
        }
        Output.print("\(total)")
    }
}
