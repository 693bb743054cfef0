import Foundation

@testable import Store

/// Runs `body` with a fresh temporary directory, and removes the directory afterwards whatever
/// `body` does.
func withTemporaryDirectory<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
    try await TemporaryDirectory.with(body)
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
