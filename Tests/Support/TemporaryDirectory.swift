import Foundation

/// A fresh folder under the system's temporary folder for one test, removed with everything
/// in it when the last reference goes away (or by `remove()`), whether the test passed, failed
/// or threw.
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    public init(prefix: String = "StoreTests") throws {
        let base = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let url = base.appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        // Resolve symlinks (/tmp -> /private/tmp on macOS) so paths compare equal to what a
        // program prints.
        self.url = url.resolvingSymlinksInPath()
    }

    deinit { remove() }

    /// A path inside the folder (nothing is created).
    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Where a test's store lives by default.
    public var databasePath: String { file("store.sqlite") }

    /// Creates a subfolder and returns its path.
    @discardableResult
    public func makeDirectory(_ name: String) throws -> String {
        let path = file(name)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes `data` to a file inside the folder and returns its path.
    @discardableResult
    public func write(_ data: Data, to name: String) throws -> String {
        let path = file(name)
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Removes the folder now.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// Runs `body` with a new temporary folder, removing it afterwards whatever happens.
    public static func with<T>(prefix: String = "StoreTests", _ body: (TemporaryDirectory) async throws -> T) async throws -> T {
        let directory = try TemporaryDirectory(prefix: prefix)
        defer { directory.remove() }
        return try await body(directory)
    }
}
