import ArgumentParser
import Store

struct FrameworksList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List every framework, by id.")

    @OptionGroup var store: StoreOptions
    @Flag(help: "Print a JSON array of feed-shaped frameworks.") var json = false

    static let listing = RecordListing<Framework>(
        table: Table("ID", "NAME", "IMAGE NAME", "URL", whole: [0]),
        cells: { [$0.id, $0.name, $0.imageName, $0.urlString] },
        json: \.jsonValue)

    func run() async throws {
        let json = json
        try await store.withStore(.existing) { opened in
            try await Self.listing.print(from: opened, asJSON: json) { db, body in try db.frameworks.fetchEach(body) }
        }
    }
}
