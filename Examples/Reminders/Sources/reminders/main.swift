// reminders DB FEED: syncs FEED (a version-1 feed, which may also hold the built-in kinds) into
// the store at DB, then prints every reminder as one JSON object per line, sorted by id.
// An invalid feed fails the run naming each problem's JSON path, and leaves DB unchanged.
import Foundation
import Reminders
import Store

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("reminders: \(message)\n".utf8))
    exit(1)
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2 else { fail("usage: reminders DB FEED") }
let databasePath = arguments[arguments.startIndex]
let feedPath = arguments[arguments.startIndex + 1]

do {
    let store = try await Store.open(at: databasePath, configuration: .reminders())
    do {
        var options = SyncOptions()
        options.policy = .preferRemote
        options.force = true
        _ = try await store.sync(from: FeedSource(feedPath), options: options)
        let reminders = try await store.read { try $0.records(Reminder.self).fetchAll() }
        let writer = JSONWriter(pretty: false)
        for reminder in reminders {
            // Exactly the four fields, in this order.
            let line = JSONValue.object([
                JSONMember("id", .string(reminder.id)), JSONMember("title", .string(reminder.title)),
                JSONMember("due", .string(reminder.due.description)), JSONMember("done", .bool(reminder.done)),
            ])
            print(writer.string(line))
        }
        await store.close()
    } catch {
        await store.close()
        throw error
    }
} catch {
    fail("\(feedPath): \(error)")
}
