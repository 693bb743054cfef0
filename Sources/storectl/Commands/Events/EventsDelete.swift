import ArgumentParser
import Store

struct EventsDelete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Delete an event.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The event's id.") var id: String

    func run() async throws {
        let id = id
        try await store.withStore(.existing) {
            guard try await $0.events.delete(id) else { throw StoreError.recordNotFound(kind: .event, key: id) }
        }
        Output.print("deleted event \(id)")
    }
}
