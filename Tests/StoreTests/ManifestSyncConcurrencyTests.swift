import Foundation
import Testing

@testable import Store

/// From the cancellation review: two syncs of one published folder at once, in one process.
@Suite("Concurrent syncs of one published feed")
struct ManifestSyncConcurrencyTests {
    @Test("two syncs of one manifest at once both succeed: the second finds the head applied and is up to date")
    func bothSucceed() async throws {
        try await withTemporaryStore { source, directory in
            let folder = directory.url.appendingPathComponent("public", isDirectory: true)
            let manifest = try FeedSource(folder.appendingPathComponent(PublishedManifest.fileName).path)
            try await source.frameworks.insert(
                Framework(id: "f-0", name: "F", imageName: "f", urlString: "https://f", description: "d"))
            _ = try await source.publish(to: folder)
            let client = try await Store.open(at: directory.file("client.sqlite"))
            _ = try await client.sync(from: manifest)
            for round in 1...8 {
                try await source.frameworks.insert(
                    Framework(id: "f-\(round)", name: "F", imageName: "f", urlString: "https://f", description: "d"))
                _ = try await source.publish(to: folder)
                async let first = client.sync(from: manifest)
                async let second = client.sync(from: manifest)
                // Used to fail one of them, about every other round: "synced from this source meanwhile".
                let statuses = try await [first.status, second.status]
                #expect(statuses.contains(.applied) || statuses == [.upToDate, .upToDate], "round \(round): \(statuses)")
            }
            #expect(try await client.frameworks.fetchAll().count == 9)
            let failed = try await client.syncHistory(limit: 100).filter { $0.outcome == .failed }
            #expect(failed.isEmpty, "\(failed)")
            await client.close()
        }
    }
}
