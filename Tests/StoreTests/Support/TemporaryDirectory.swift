import Foundation
@testable import Store

/// A directory of its own under the system's temporary directory, for one test.
struct TemporaryDirectory: Sendable {
    let url: URL

    /// Creates `StoreTests-<UUID>` under `FileManager.default.temporaryDirectory`.
    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("StoreTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    /// The path of `name` inside the directory.
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Where the test's store lives.
    var databasePath: String { path("store.sqlite") }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Runs `body` with a fresh temporary directory, and removes the directory afterwards whatever
/// `body` does.
func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    return try await body(directory)
}

/// Runs `body` with a store opened on a new SQLite file in a temporary directory; closes the
/// store and removes the directory afterwards, whatever `body` does.
func withTemporaryStore<T>(
    configuration: Store.Configuration = .init(),
    _ body: (Store, TemporaryDirectory) async throws -> T
) async throws -> T {
    try await withTemporaryDirectory { directory in
        let store = try await Store.open(at: directory.databasePath, configuration: configuration)
        do {
            let result = try await body(store, directory)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }
}

/// Opens a store on `path`, runs `body`, and closes it, whatever `body` does.
func withStore<T>(
    at path: String, configuration: Store.Configuration = .init(),
    _ body: (Store) async throws -> T
) async throws -> T {
    let store = try await Store.open(at: path, configuration: configuration)
    do {
        let result = try await body(store)
        await store.close()
        return result
    } catch {
        await store.close()
        throw error
    }
}

/// Runs `body` with a new in-memory store and closes it afterwards, whatever `body` does.
func withInMemoryStore<T>(
    configuration: Store.Configuration = .init(),
    _ body: (Store) async throws -> T
) async throws -> T {
    let store = try await Store.inMemory(configuration: configuration)
    do {
        let result = try await body(store)
        await store.close()
        return result
    } catch {
        await store.close()
        throw error
    }
}
