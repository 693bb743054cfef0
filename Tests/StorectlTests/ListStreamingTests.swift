import Foundation
import Testing

/// `storectl <kind> list` writes records as it reads them (two walks of one snapshot), so a list
/// of any length runs in bounded memory: these check that what it prints is still the whole
/// list, ordered, in columns sized to the widest cell wherever that cell is, across many
/// buffer flushes; and that a reader that stops early ends it. (Its peak memory on a million
/// records is a benchmark row, `list-memory-1m`.)
@Suite("storectl list, streamed")
struct ListStreamingTests {
    static let count = 3_000

    /// A feed of `count` frameworks (ids f0000...), orders, events and images (3 bytes each).
    /// One framework near the end has a name 40 columns wide, every other one 8; one order near
    /// the end a total with more digits than the rest; one event's title is the widest; one
    /// image's url is the longest.
    static func feed() -> Data {
        var frameworks: [[String: Any]] = [], orders: [[String: Any]] = [], events: [[String: Any]] = []
        var images: [[String: Any]] = []
        for index in 0..<count {
            let id = String(format: "%04d", index)
            let name = index == count - 2 ? String(repeating: "W", count: 40) : "name\(id)"
            frameworks.append([
                "id": "f\(id)", "name": name, "imageName": "i\(id)", "urlString": "https://example.com/\(id)",
                "description": "framework \(id)",
            ])
            let price = index == count - 3 ? "123456.78" : "1.25"
            orders.append([
                "id": "o\(id)", "placedAt": "2026-11-20T09:30:00.250Z",
                "items": [["itemName": "item", "price": Decimal(string: price)!, "aisle": 1, "quantity": 2]],
            ])
            let day = 1 + index % 28
            events.append([
                "id": "e\(id)", "title": index == count - 1 ? String(repeating: "T", count: 30) : "event",
                "date": String(format: "2026-02-%02d", day),
            ])
            let url =
                index == count - 4
                ? "https://images.example/\(id)/" + String(repeating: "u", count: 20) : "https://i.example/\(id)"
            images.append(["url": url, "data": "AAEC", "contentType": "image/png"])
        }
        let feed: [String: Any] = ["version": 1, "frameworks": frameworks, "orders": orders, "events": events, "images": images]
        return try! JSONSerialization.data(withJSONObject: feed)
    }

    /// `lines`' rows laid out again from their cells (no cell here holds a space) in columns as wide
    /// as the rule under the header says, and those widths: what `lines` should be.
    static func relaidOut(_ lines: [String], rightAligned: Set<Int>) -> (lines: [String], widths: [Int]) {
        let widths = lines[1].split(separator: " ").map(\.count)
        let relaid = lines.enumerated().map { number, line -> String in
            guard number >= 2 else { return line } // the header and the rule
            var cells = line.split(separator: " ").map(String.init)
            cells += Array(repeating: "", count: max(0, widths.count - cells.count))
            let padded = cells.enumerated().map { index, cell in
                let padding = String(repeating: " ", count: max(0, widths[index] - cell.count))
                return rightAligned.contains(index) ? padding + cell : cell + padding
            }
            var text = padded.joined(separator: "  ")
            while text.last == " " { text.removeLast() }
            return text
        }
        return (relaid, widths)
    }

    @Test("every record, in order; JSON whole; table columns as wide as the widest cell, even one near the end")
    func wholeOrderedAndAligned() async throws {
        let storectl = try Storectl()
        let feed = try storectl.directory.write(Self.feed(), to: "feed.json")
        expectSuccess(try await storectl.run(["sync", feed, "--quiet"], timeout: 120))

        let frameworks = try JSON.array(expectSuccess(try await storectl("frameworks", "list", "--json")).stdout)
        #expect(frameworks.map { JSON.string($0, "id") ?? "" } == (0..<Self.count).map { String(format: "f%04d", $0) })
        #expect(JSON.string(frameworks[Self.count - 2], "name") == String(repeating: "W", count: 40))
        #expect(JSON.string(frameworks[17], "description") == "framework 0017")
        let orders = try JSON.array(expectSuccess(try await storectl("orders", "list", "--json")).stdout)
        #expect(orders.count == Self.count)
        #expect(JSON.cents(orders[Self.count - 3]["total"]) == 24_691_356)
        #expect(JSON.cents(orders[0]["total"]) == 250)
        let events = try JSON.array(expectSuccess(try await storectl("events", "list", "--json")).stdout)
        let dates = events.map { JSON.string($0, "date") ?? "" }
        #expect(events.count == Self.count && dates == dates.sorted())
        let images = try JSON.array(expectSuccess(try await storectl("images", "list", "--json")).stdout)
        let urls = images.map { JSON.string($0, "url") ?? "" }
        #expect(images.count == Self.count && urls == urls.sorted() && images.allSatisfy { JSON.integer($0["size"]) == 3 })

        for (arguments, widestCell, rightAligned) in [
            (["frameworks", "list"], String(repeating: "W", count: 40), []), (["orders", "list"], "246913.56", [2, 3]),
            (["events", "list"], String(repeating: "T", count: 30), Set<Int>()),
            (
                ["images", "list"],
                "https://images.example/\(String(format: "%04d", Self.count - 4))/" + String(repeating: "u", count: 20), [2]
            ),
        ] {
            let list = expectSuccess(try await storectl.run(arguments))
            let lines = list.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
            #expect(lines.count == Self.count + 2, "\(arguments)")
            guard lines.count > 2 else { continue }
            // Each column is as wide as its widest cell, the one printed near the end included:
            // every column was measured before the first row was printed.
            let (relaid, widths) = Self.relaidOut(lines, rightAligned: rightAligned)
            let misaligned = zip(relaid, lines).filter { $0 != $1 }.map(\.1)
            #expect(
                misaligned.count == 0,
                "\(arguments): \(misaligned.prefix(2)) should be \(relaid.filter { !lines.contains($0) }.prefix(2))")
            let headers = lines[0].components(separatedBy: "  ").filter { !$0.isEmpty }.map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let cells = lines.dropFirst(2).map { $0.split(separator: " ") }
            let widest = widths.indices.map { index in
                ([headers[index].count] + cells.map { index < $0.count ? $0[index].count : 0 }).max() ?? 0
            }
            #expect(widths == widest, "\(arguments)")
            #expect(widths.contains(widestCell.count), "\(arguments): \(widths)")
        }
    }

    /// The first walk reads every record before the second prints any: a record that cannot
    /// be read, last in order and after far more than one buffer of output, still fails the
    /// command with nothing on stdout.
    @Test("a record that cannot be read, last of thousands, fails the list before anything is printed")
    func aBadRecordLastFailsBeforeAnyOutput() async throws {
        let storectl = try Storectl()
        let feed = try storectl.directory.write(Self.feed(), to: "feed.json")
        expectSuccess(try await storectl.run(["sync", feed, "--quiet"], timeout: 120))
        // Written around the table's CHECK, as another tool could; 'n' sorts after every digit.
        _ = try await sqlite3(
            storectl.db,
            "PRAGMA ignore_check_constraints = ON; INSERT INTO events (id, title, date) VALUES ('e-bad', 'T', 'not a date');")
        for arguments in [["events", "list", "--json"], ["events", "list"]] {
            expectFailure(try await storectl.run(arguments), status: 1, mentioning: ["e-bad", "date"])
        }
    }

    /// A parent that ignores SIGPIPE (ignored signals stay ignored across exec) leaves storectl
    /// to find the reader gone as EPIPE from write: it used to crash there (Foundation's
    /// `FileHandle.write` traps on any error), with a backtrace and status 132.
    @Test(
        "a reader that goes early ends the command: status 1 and 'stdout: Broken pipe', no crash",
        arguments: [["frameworks", "list", "--json"], ["orders", "list"], ["frameworks", "show", "f0001"], ["export"]])
    func aReaderThatGoesEndsIt(arguments: [String]) async throws {
        let storectl = try Storectl()
        let feed = try storectl.directory.write(Self.feed(), to: "feed.json")
        expectSuccess(try await storectl.run(["sync", feed, "--quiet"], timeout: 120))
        // The reader closes its end of the pipe, then says so with a file; storectl starts
        // only then, so its first write finds no reader, however the two are scheduled.
        let script = """
            trap '' PIPE
            { while [ ! -e gone ]; do sleep 0.01; done; "$0" "$@" 2>stderr.txt; echo $? >status.txt; } | { exec 0<&-; : >gone; }
            cat status.txt stderr.txt
            """
        let result = expectSuccess(
            try await storectl.run(["-c", script, try Storectl.executableURL().path] + arguments, shell: true))
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "1", "\(arguments): \(result.stdout)")
        // export's message is the library's (it writes the feed itself), the others storectl's.
        let message = arguments == ["export"] ? "Error: stdout: cannot write: Broken pipe" : "Error: stdout: Broken pipe"
        #expect(lines.dropFirst().joined(separator: "\n") == message, "\(arguments): \(result.stdout)")
    }
}
