import ArgumentParser
import Store

/// An error storectl prints as one sentence on stderr before exiting non-zero. Its text is
/// `TerminalText`: the values it quotes (a path, an id, a feed's problems) are escaped.
struct CLIError: Error, CustomStringConvertible {
    let text: TerminalText
    var description: String { text.text }
    init(_ text: TerminalText) { self.text = text }
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
