import Foundation
import Testing

/// Several storectl processes on one file at once: SQLite's locking and the busy timeout make
/// them wait for each other; none fails with "database is locked".
@Suite("storectl processes sharing one store")
struct ConcurrencyTests {
    static func addArguments(_ id: String) -> [String] {
        [
            "frameworks", "add", "--id", id, "--name", "Name \(id)", "--image-name", id, "--url", "https://example.com/\(id)",
            "--description", String(repeating: "description of \(id) ", count: 20),
        ]
    }

    func expectClean(_ result: StorectlResult, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.succeeded, "\(result)", sourceLocation: sourceLocation)
        #expect(!result.stderr.lowercased().contains("locked"), "\(result)", sourceLocation: sourceLocation)
        #expect(!result.stderr.lowercased().contains("busy"), "\(result)", sourceLocation: sourceLocation)
    }

    @Test("2 x 20 concurrent `frameworks add` on a fresh file, with readers alongside: all succeed, all rows there")
    func concurrentWriters() async throws {
        let storectl = try Storectl()
        let groups = ["a", "b"]
        let perGroup = 20
        let results = try await withThrowingTaskGroup(of: (String, StorectlResult).self) { group in
            for prefix in groups {
                for index in 0..<perGroup {
                    let id = "\(prefix)-\(index)"
                    group.addTask { (id, try await storectl.run(Self.addArguments(id))) }
                }
            }
            for index in 0..<6 {
                group.addTask { ("reader-\(index)", try await storectl("frameworks", "list", "--json")) }
            }
            var results: [(String, StorectlResult)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.count == groups.count * perGroup + 6)
        for (id, result) in results {
            expectClean(result)
            if id.hasPrefix("reader") {
                // A reader sees some committed snapshot: valid JSON, complete records.
                let list = try JSON.array(result.stdout)
                #expect(list.count <= groups.count * perGroup)
                #expect(
                    list.allSatisfy {
                        ($0["description"] as? String)?.count == ("description of \($0["id"] as? String ?? "") ".count * 20)
                    })
            } else {
                #expect(result.output == "added framework \(id)")
            }
        }

        let list = try JSON.array(expectSuccess(try await storectl("frameworks", "list", "--json")).stdout)
        let expected = Set(groups.flatMap { prefix in (0..<perGroup).map { "\(prefix)-\($0)" } })
        #expect(list.count == expected.count)
        #expect(Set(list.compactMap { $0["id"] as? String }) == expected)
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM frameworks") == String(expected.count))
        #expect(try await sqlite3(storectl.db, "PRAGMA integrity_check") == "ok")
        // Racing to create the file applied each migration exactly once.
        let statuses = try JSON.array(expectSuccess(try await storectl("migrate", "status", "--json")).stdout)
        #expect(statuses.allSatisfy { $0["state"] as? String == "applied" })
        #expect(try await sqlite3(storectl.db, "SELECT count(*) FROM schema_migrations") == String(statuses.count))
    }

    @Test("two shell loops writing different kinds to one file at the same time")
    func shellLoops() async throws {
        let storectl = try Storectl()
        let binary = try Storectl.executableURL().path
        expectSuccess(try await storectl("migrate"))
        // Each loop runs 15 storectl processes one after another; the two loops overlap. They
        // get a longer time limit than one command: the rest of the suite runs alongside.
        async let events = storectl.run(
            [
                "-c",
                """
                for i in $(seq 1 15); do "$0" events add --id "e$i" --title "Event $i" --date 2026-06-$(printf %02d $i) || exit 1; done
                """, binary,
            ], shell: true, timeout: 90)
        async let orders = storectl.run(
            [
                "-c",
                """
                for i in $(seq 1 15); do "$0" orders add --id "o$i" --item "Item $i:0.10:1:$i" || exit 1; done
                """, binary,
            ], shell: true, timeout: 90)
        let (eventsResult, ordersResult) = try await (events, orders)
        expectClean(eventsResult)
        expectClean(ordersResult)
        #expect(eventsResult.lines.count == 15 && ordersResult.lines.count == 15)

        let dates = try JSON.array(expectSuccess(try await storectl("events", "dates", "--month", "2026-06", "--json")).stdout)
        #expect(dates.count == 15)
        #expect(dates.allSatisfy { JSON.integer($0["count"]) == 1 })
        let orderList = try JSON.array(expectSuccess(try await storectl("orders", "list", "--json")).stdout)
        #expect(orderList.count == 15)
        // Sum of 0.10 * i for i in 1...15 = 12.00, exactly.
        #expect(orderList.compactMap { JSON.cents($0["total"]) }.reduce(0, +) == 1200)
    }
}
