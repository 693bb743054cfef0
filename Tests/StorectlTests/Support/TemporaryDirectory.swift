import Foundation

/// A fresh directory under the system's temporary folder, removed (with everything in it) when
/// the last reference goes away, whether the test passed, failed or threw.
final class TemporaryDirectory: @unchecked Sendable {
    let url: URL
    var path: String { url.path }

    init(prefix: String = "storectl-e2e") throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        // Resolve symlinks (/tmp -> /private/tmp on macOS) so paths compare equal to what the tool prints.
        self.url = url.resolvingSymlinksInPath()
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    /// A path inside the directory (not created).
    func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Creates a subdirectory and returns its path.
    @discardableResult
    func makeDirectory(_ name: String) throws -> String {
        let path = file(name)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes `data` to a file inside the directory and returns its path.
    @discardableResult
    func write(_ data: Data, to name: String) throws -> String {
        let path = file(name)
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Runs `body` with a new temporary directory, removing it afterwards whatever happens.
    static func with<T>(_ body: (TemporaryDirectory) async throws -> T) async throws -> T {
        let directory = try TemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory.url) }
        return try await body(directory)
    }
}
