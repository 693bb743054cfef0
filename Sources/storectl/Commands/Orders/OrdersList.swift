import ArgumentParser
import Store

struct OrdersList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List every order, by id, with its exact total.")

    @OptionGroup var store: StoreOptions
    @Flag(help: "Print a JSON array of feed-shaped orders, each with its total.") var json = false

    static let listing = RecordListing<Order>(
        table: Table("ID", "PLACED AT", "ITEMS", "TOTAL", rightAligned: [2, 3], whole: [0]),
        cells: { [$0.id, Timestamp.format($0.placedAt), String($0.items.count), try $0.total.description] },
        json: { $0.jsonValue(includingTotal: true) })

    func run() async throws {
        let json = json
        try await store.withStore(.existing) { opened in
            try await Self.listing.print(from: opened, asJSON: json) { db, body in try db.orders.fetchEach(body) }
        }
    }
}
