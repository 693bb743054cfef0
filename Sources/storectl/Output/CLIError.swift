import ArgumentParser
import Store

/// An error storectl prints as one sentence on stderr before exiting non-zero.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs `body`, turning store errors into one sentence that names the database file.
func withStoreErrors<T>(_ path: String, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as CLIError {
        throw error
    } catch let error as ExitCode {
        throw error
    } catch let error as StoreError {
        throw CLIError("\(path): \(error)")
    } catch let error as SQLiteError {
        throw CLIError("\(path): \(error)")
    }
}
