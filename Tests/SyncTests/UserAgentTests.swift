import Foundation
import Store
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every request names the library and its version, the same version `storectl --version` prints.
@Suite(.timeLimit(.minutes(10)))
struct UserAgentTests {
    @Test func requestsCarryTheLibraryVersion() async throws {
        let server = try await FeedServer.start()
        defer { server.stop() }

        let response = try await HTTPTransport.live.send(HTTPRequest(url: server.url("/headers-echo")))
        let echoed = try JSONDecoder().decode([String: String].self, from: response.body)
        #expect(echoed["user-agent"] == "Store/\(Store.version)")

        // A caller's own User-Agent wins.
        let own = try await HTTPTransport.live.send(
            HTTPRequest(url: server.url("/headers-echo"), headers: ["User-Agent": "mine/1"]))
        #expect(try JSONDecoder().decode([String: String].self, from: own.body)["user-agent"] == "mine/1")
    }
}
