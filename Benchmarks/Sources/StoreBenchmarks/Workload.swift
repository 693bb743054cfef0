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
            description: "Framework \(index) lets apps do one thing well: it is fast, safe, documented, tested and a pleasure to use in every kind of app.")
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
        ["workload": id, "title": workload, "ours": ours, "baseline": baseline,
         "ratio": ratioValue.isFinite ? ratioValue as Any : NSNull(), "ratioText": ratio, "target": target, "met": met]
    }
}

/// Every workload's id, in the order the benchmark runs them.
let workloadIDs = [
    "insert", "fetch", "sync-empty", "sync-half", "concurrent-writes", "concurrent-writes-full", "images",
    "observation-latency", "memory",
]
