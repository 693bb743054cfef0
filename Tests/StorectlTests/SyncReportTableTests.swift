import Foundation
import Testing

@Suite("storectl sync's report table")
struct SyncReportTableTests {
    /// The human report puts each count under its own heading. Every other test read the
    /// `--json` report or only the status line: the table with two columns swapped (updates
    /// shown as kept) went unnoticed. Each count differs here, so a swap shows.
    @Test("each count is in its own column, and each conflict is named")
    func eachCountInItsColumn() async throws {
        let storectl = try Storectl()
        let feed = storectl.directory.file("feed.json")
        func write(_ names: [String: String], deleted: [String] = []) throws {
            let records = names.keys.sorted().map { id in
                #"{"id": "\#(id)", "name": "\#(names[id]!)", "imageName": "i", "urlString": "https://example.com/\#(id)", "description": "d"}"#
            }
            let tombstones = deleted.map { #""\#($0)""# }.joined(separator: ", ")
            let text =
                #"{"version": 1, "frameworks": [\#(records.joined(separator: ", "))], "deleted": {"frameworks": [\#(tombstones)]}}"#
            try Data(text.utf8).write(to: URL(fileURLWithPath: feed))
        }
        let updated = ["u1", "u2"], kept = ["k1", "k2", "k3"], unchanged = ["n1", "n2", "n3", "n4"]
        let deleted = ["d1", "d2", "d3", "d4", "d5"]
        var first: [String: String] = [:]
        for id in updated + kept + unchanged + deleted { first[id] = "v1" }
        try write(first)
        expectSuccess(try await storectl("sync", feed, "--policy", "three-way"))
        for id in kept { expectSuccess(try await storectl("frameworks", "update", id, "--name", "local")) }

        var second: [String: String] = ["i1": "v1"]
        for id in updated + kept { second[id] = "v2" }
        for id in unchanged { second[id] = "v1" }
        try write(second, deleted: deleted)
        let report = expectSuccess(try await storectl("sync", feed, "--policy", "three-way"))

        let rows = report.stdout.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        #expect(rows.contains(["KIND", "INSERTED", "UPDATED", "KEPT", "UNCHANGED", "DELETED"]), "\(report)")
        #expect(rows.contains(["frameworks", "1", "2", "3", "4", "5"]), "\(report)")
        #expect(rows.contains(["orders", "0", "0", "0", "0", "0"]), "\(report)")
        for id in kept {
            #expect(report.stdout.contains("'\(id)' changed on both sides; kept local"), "\(report)")
        }
        var names: [String: String] = [:]
        for object in try JSON.array(expectSuccess(try await storectl("frameworks", "list", "--json")).stdout) {
            names[JSON.string(object, "id") ?? ""] = JSON.string(object, "name")
        }
        #expect(names.count == 10, "one inserted, and the nine of the first feed not deleted")
        for id in kept { #expect(names[id] == "local") }
        for id in updated { #expect(names[id] == "v2") }
    }
}
