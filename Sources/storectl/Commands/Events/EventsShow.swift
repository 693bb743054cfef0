import ArgumentParser
import Store

struct EventsShow: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one event.")

    @OptionGroup var store: StoreOptions
    @Argument(help: "The event's id.") var id: String
    @Flag(help: "Print the feed-shaped event as JSON.") var json = false

    func run() async throws {
        let id = id
        let event = try await store.withStore(.existing) {
            guard let event = try await $0.events.find(id) else { throw StoreError.recordNotFound(kind: .event, key: id) }
            return event
        }
        if json { return Output.printJSON(event.jsonValue) }
        Output.print("id:    \(event.id)\ntitle: \(event.title)\ndate:  \(event.date)\nnotes: \(event.notes ?? "")")
    }
}
