import Dispatch
import Foundation

/// The outcome of `body`, success or error, for tests that expect some calls to fail.
func outcome<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}
