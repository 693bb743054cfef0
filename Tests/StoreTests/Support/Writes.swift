import Dispatch
import Testing

@testable import Store

/// A store's writer kept busy inside a write (which inserts the framework "holder") until
/// `release()`, so that writes requested meanwhile queue up behind it and then run together.
struct HeldWriter {
    private let store: Store
    private let release: DispatchSemaphore
    private let holder: Task<Void, any Error>

    /// Starts the holding write and returns once it is running.
    init(_ store: Store) async {
        let holding = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        holder = Task {
            try await store.write { db in
                try db.frameworks.insert(Fixtures.framework("holder"))
                holding.signal()
                // Only stops a hang: the writes queued behind it take minutes on a loaded machine.
                _ = release.wait(timeout: .now() + 240)
            }
        }
        self.store = store
        self.release = release
        #expect(await wait(for: holding))
    }

    /// Lets the holding write commit once `queued` writes wait behind it (or 240 s have passed).
    func release(once queued: Int) async throws {
        _ = await eventually(within: 240) { store.writer.queuedWrites >= queued }
        #expect(store.writer.queuedWrites == queued)
        release.signal()
        try await holder.value
    }
}

/// `tasks` tasks at once, each inserting `writesPerTask` frameworks ("t<task>-<number>"), one
/// write per framework.
func writeConcurrently(_ store: Store, tasks: Int = 8, writesPerTask: Int) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<tasks {
            group.addTask {
                for number in 0..<writesPerTask {
                    try await store.frameworks.insert(Fixtures.framework("t\(task)-\(number)"))
                }
            }
        }
        try await group.waitForAll()
    }
}

/// The ids `writeTenOneFailing` writes: the fifth is "taken", which the store must already hold.
let tenIDsOneTaken = (0..<10).map { $0 == 4 ? "taken" : "new-\($0)" }

/// Ten concurrent writes, one per id of `tenIDsOneTaken`; the one for "taken" first inserts
/// "partial", then fails on the duplicate id. `meanwhile` runs once they are requested.
/// Returns each id's outcome.
func writeTenOneFailing(_ store: Store, meanwhile: () async throws -> Void = {}) async throws -> [String: Result<Void, any Error>]
{
    try await withThrowingTaskGroup(of: (String, Result<Void, any Error>).self) { group in
        for id in tenIDsOneTaken {
            group.addTask {
                let result = await outcome {
                    try await store.write { db in
                        // The failing write first does something that must be undone too.
                        if id == "taken" { try db.frameworks.insert(Fixtures.framework("partial")) }
                        try db.frameworks.insert(Fixtures.framework(id, name: "New"))
                    }
                }
                return (id, result)
            }
        }
        try await meanwhile()
        return try await group.reduce(into: [String: Result<Void, any Error>]()) { $0[$1.0] = $1.1 }
    }
}

/// Expects that of `writeTenOneFailing`'s writes exactly the duplicate failed, with
/// `recordExists`, and left nothing behind: neither its "partial" record nor a changed "taken".
func expectOnlyTheDuplicateFailed(_ outcomes: [String: Result<Void, any Error>], in store: Store) async throws {
    for id in tenIDsOneTaken where id != "taken" {
        if case .failure(let error) = outcomes[id] { Issue.record("\(id) failed: \(error)") }
    }
    guard case .failure(let error) = outcomes["taken"] else {
        Issue.record("the duplicate insert succeeded")
        return
    }
    #expect(error as? StoreError == .recordExists(kind: .framework, key: "taken"))
    #expect(try await store.frameworks.find("taken")?.name == "Original")
    #expect(try await store.frameworks.find("partial") == nil)
}
