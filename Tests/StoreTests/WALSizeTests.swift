import Foundation
import Testing

@testable import Store

/// The WAL is cut back once a checkpoint lets it start over (`journal_size_limit`), instead of
/// keeping its largest size for as long as the store is open.
@Suite("WAL size")
struct WALSizeTests {
    private static func walSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
    }

    @Test("after a write far larger than the limit, the next small writes cut the WAL back to the limit")
    func bigWriteThenSmallOnes() async throws {
        var configuration = Store.Configuration()
        configuration.durability = .normal
        try await withTemporaryStore(configuration: configuration) { store, directory throws in
            // About 12 MB of pages in one transaction: the WAL grows past the limit to hold it.
            let padding = String(repeating: "x", count: 1_000)
            let frameworks = (0..<10_000).map { index in
                Framework(
                    id: "big-\(index)", name: "Framework \(index)", imageName: "image-\(index)",
                    urlString: "https://developer.apple.com/\(index)", description: padding)
            }
            try await store.frameworks.insert(frameworks)
            let grown = try Self.walSize(directory.databasePath)
            #expect(grown > 3 * Store.walSizeLimit, "the WAL held \(grown) bytes")
            // The big commit checkpointed (it passed the auto-checkpoint's 1,000 pages); the next
            // write starts the WAL over, and its commit truncates it.
            for index in 0..<3 { try await store.frameworks.insert(Fixtures.framework("small-\(index)")) }
            let after = try Self.walSize(directory.databasePath)
            #expect(after <= Store.walSizeLimit, "the WAL still held \(after) bytes (it grew to \(grown))")
            #expect(try await store.frameworks.count() == 10_003)
        }
    }
}
