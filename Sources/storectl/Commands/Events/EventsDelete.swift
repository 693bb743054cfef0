import ArgumentParser
import Store

struct EventsDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an event.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The event's id.") var id: String

    func run() async throws {
        let opened = try await store.open()
        try await withStoreErrors(store.resolvedPath) {
            guard try await opened.events.delete(id) else { throw StoreError.recordNotFound(kind: .event, key: id) }
        }
        Output.print("deleted event \(id)")
    }
}
