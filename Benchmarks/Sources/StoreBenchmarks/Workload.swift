import Foundation
import Store

/// N frameworks of about 264 bytes each, the same every run.
func makeFrameworks(_ count: Int, from start: Int = 0) -> [Framework] {
    (start..<(start + count)).map { index in
        let number = String(index)
        let id = "fw-" + String(repeating: "0", count: max(0, 7 - number.count)) + number
        return Framework(
            id: id, name: "Framework \(index)", imageName: "framework-\(index)",
            urlString: "https://developer.apple.com/documentation/\(id)",
            description:
                "Framework \(index) lets apps do one thing well: it is fast, safe, documented, tested and a pleasure to use in every kind of app."
        )
    }
}

/// A feed file holding `frameworks`, one per line (a framework's Codable keys are the feed's).
func writeFeed(_ frameworks: [Framework], to path: String) throws {
    var text = "{\n  \"version\": 1,\n  \"frameworks\": [\n"
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    for (index, framework) in frameworks.enumerated() {
        let object = String(decoding: try encoder.encode(framework), as: UTF8.self)
        text += "    " + object + (index + 1 < frameworks.count ? ",\n" : "\n")
    }
    text += "  ]\n}\n"
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// A feed of `count` frameworks (`makeFrameworks`' records, in its shape), generated and
/// written 10,000 at a time: a feed of millions never exists in this process's memory.
func writeFrameworkFeed(count: Int, to path: String) throws {
    FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    let writer = JSONWriter(pretty: false)
    try handle.write(contentsOf: Data("{\n  \"version\": 1,\n  \"frameworks\": [\n".utf8))
    var start = 0
    while start < count {
        let batch = makeFrameworks(min(10_000, count - start), from: start)
        var text = ""
        for (offset, framework) in batch.enumerated() {
            text += "    " + writer.string(framework.jsonValue) + (start + offset + 1 < count ? ",\n" : "\n")
        }
        try handle.write(contentsOf: Data(text.utf8))
        start += batch.count
    }
    try handle.write(contentsOf: Data("  ]\n}\n".utf8))
}

/// `count` orders of 1 to 4 items each (2.5 on average) and `count` events, the same every
/// run: prices with cents, placedAt with milliseconds, some events without notes.
func makeOrdersAndEvents(_ count: Int) -> (orders: [Order], events: [Event]) {
    let base = 1_795_000_000.0
    let orders = (0..<count).map { index in
        let number = String(index)
        let id = "order-" + String(repeating: "0", count: max(0, 7 - number.count)) + number
        let items = (0..<(index % 4 + 1)).map { position in
            OrderItem(
                itemName: "Item \(index)-\(position) from the usual aisle",
                price: Money(minorUnits: Int64(99 + (index * 7 + position * 13) % 10_000)),
                aisle: (index + position) % 40, quantity: position % 3 + 1)
        }
        return Order(id: id, placedAt: Date(timeIntervalSince1970: base + Double(index) * 61.125), items: items)
    }
    let events = (0..<count).map { index in
        let number = String(index)
        let id = "event-" + String(repeating: "0", count: max(0, 7 - number.count)) + number
        let date = CalendarDate(String(format: "20%02d-%02d-%02d", 20 + index % 10, index % 12 + 1, index % 28 + 1))!
        return Event(
            id: id, title: "Event \(index): a meeting about the roadmap", date: date,
            notes: index % 3 == 0 ? nil : "Room \(index % 50), bring the notes from last time")
    }
    return (orders, events)
}

/// A feed holding `orders` and `events`, in the exporter's record shapes.
func writeFeed(orders: [Order], events: [Event], to path: String) throws {
    let writer = JSONWriter(pretty: false)
    var text = "{\n  \"version\": 1,\n  \"orders\": [\n"
    for (index, order) in orders.enumerated() {
        text += "    " + writer.string(order.jsonValue()) + (index + 1 < orders.count ? ",\n" : "\n")
    }
    text += "  ],\n  \"events\": [\n"
    for (index, event) in events.enumerated() {
        text += "    " + writer.string(event.jsonValue) + (index + 1 < events.count ? ",\n" : "\n")
    }
    text += "  ]\n}\n"
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// One line of the results table, and one object of `--json`.
struct Result {
    /// The workload's stable id (`--only` takes it; `workload` in the JSON).
    let id: String
    /// What the table's first column says.
    let workload: String
    let ours: String
    let baseline: String
    /// The ratio as the table shows it.
    let ratio: String
    /// The same as a number (`ratio` in the JSON).
    let ratioValue: Double
    let target: String
    let met: Bool

    var json: [String: Any] {
        [
            "workload": id, "title": workload, "ours": ours, "baseline": baseline,
            "ratio": ratioValue.isFinite ? ratioValue as Any : NSNull(), "ratioText": ratio, "target": target, "met": met,
        ]
    }
}

/// Every workload's id, in the order the benchmark runs them.
let workloadIDs = [
    "insert", "fetch", "sync-empty", "sync-half", "sync-orders-events", "concurrent-writes", "concurrent-writes-full", "images",
    "observation-latency", "sync-memory-1m", "export-memory-1m", "list-memory-1m", "sync-memory-3m", "incremental-sync",
]

/// The memory rows: they generate feeds of millions of records, so they run only when asked
/// (`--memory`, or `--only` naming them).
let memoryWorkloadIDs: Set = ["sync-memory-1m", "export-memory-1m", "list-memory-1m", "sync-memory-3m"]
