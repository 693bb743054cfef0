import Foundation
import Testing

@testable import Store

/// From the review of incremental sync over time: HTTP validators count whole seconds.
@Suite("A published manifest's modification time")
struct PublishedManifestTimeTests {
    @Test("each new manifest is modified in a later second than the one it replaces, so no client gets a 304 for it")
    func laterSecond() async throws {
        try await withTemporaryStore { store, directory in
            let folder = directory.url.appendingPathComponent("public", isDirectory: true)
            let manifest = folder.appendingPathComponent(PublishedManifest.fileName).path
            func second() throws -> Int {
                let date = try FileManager.default.attributesOfItem(atPath: manifest)[.modificationDate] as! Date
                return Int(date.timeIntervalSince1970.rounded(.down))
            }
            try await store.frameworks.insert(
                Framework(id: "a", name: "A", imageName: "a", urlString: "https://a", description: "v1"))
            _ = try await store.publish(to: folder)
            // As if the last publish had been a moment later than now (or a clock had stepped
            // back): the next manifest must still be newer, by Last-Modified's whole seconds.
            let ahead = Int(Date().timeIntervalSince1970) + 100
            try FileManager.default.setAttributes(
                [.modificationDate: Date(timeIntervalSince1970: TimeInterval(ahead) + 0.5)], ofItemAtPath: manifest)
            for version in 2...4 {
                let before = try second()
                try await store.frameworks.update(
                    Framework(id: "a", name: "A", imageName: "a", urlString: "https://a", description: "v\(version)"))
                _ = try await store.publish(to: folder)
                #expect(try second() > before, "publish \(version)")
            }
        }
    }
}
