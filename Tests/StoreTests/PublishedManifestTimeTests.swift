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

    @Test("a Last-Modified within a second of the response's Date is not kept as a validator (RFC 9110: weak)")
    func weakLastModified() throws {
        let url = URL(string: "http://127.0.0.1:8080/public/manifest.json")!
        func validators(_ headers: [String: String]) -> PageValidators {
            PageValidators.of(HTTPResponse(url: url, status: 200, headers: headers, body: Data()), url: url.absoluteString)
        }
        let second = "Fri, 27 Nov 2026 07:00:00 GMT"
        #expect(validators(["last-modified": second, "date": second]).lastModified == nil)
        #expect(validators(["last-modified": second, "date": "Fri, 27 Nov 2026 07:00:00 GMT"]).canRevalidate == false)
        #expect(validators(["last-modified": second, "date": "Fri, 27 Nov 2026 07:00:01 GMT"]).lastModified == second)
        // An ETag is the server's word; no Date, nothing to compare.
        #expect(validators(["last-modified": second, "date": second, "etag": "\"x\""]).lastModified == second)
        #expect(validators(["last-modified": second]).lastModified == second)
        #expect(PageValidators.httpDate("Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
    }
}
