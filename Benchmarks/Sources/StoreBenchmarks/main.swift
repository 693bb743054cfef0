// Store benchmarks: each workload against its baseline in the same run; the table shows
// medians and ratios (ours / baseline: below 1 is faster). See Benchmarks/README in the
// top-level README, "Performance".
//
// Usage: StoreBenchmarks [--n N] [--runs R] [--storectl PATH] [--memory N] [--only NAME]
//                        [--profile-writes grouped|unbatched|empty]
// --profile-writes runs one contender of the concurrent-writes workload alone, --runs times, and
// prints its time: a process to hand to a profiler (Benchmarks/Profiles/ shows how).
import Foundation
import Store

struct Options {
    var n = 100_000
    var runs = 5
    var storectl: String?
    var memoryRecords: Int?
    var only: String?
    var profileWrites: String?

    init(_ arguments: [String]) throws {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            func value() throws -> String {
                guard let value = iterator.next() else { throw BenchmarkError("\(argument) needs a value") }
                return value
            }
            switch argument {
            case "--n": n = Int(try value()) ?? n
            case "--runs": runs = max(1, Int(try value()) ?? runs)
            case "--storectl": storectl = try value()
            case "--memory": memoryRecords = Int(try value())
            case "--only": only = try value()
            case "--profile-writes": profileWrites = try value()
            default: throw BenchmarkError("unknown argument \(argument)")
            }
        }
        if profileWrites != nil { only = "concurrent" }
    }
}

let options = try Options(CommandLine.arguments)
let scratch = Scratch()
var results: [Result] = []

func ms(_ seconds: Double) -> String { String(format: "%.0f ms", seconds * 1000) }
func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2fx", a / b) }
func rate(_ count: Int, _ seconds: Double) -> String { String(format: "%.0f/s", Double(count) / seconds) }
func wanted(_ name: String) -> Bool { options.only.map { name.contains($0) } ?? true }
func log(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

let n = options.n
let frameworks = makeFrameworks(n)

// MARK: insert N frameworks in one write

if wanted("insert") {
    log("insert \(n) frameworks in one write")
    let file = "insert.sqlite"
    // In turns (raw C, ours, GRDB statement, GRDB Codable, then again): a load that comes and
    // goes on this shared machine weighs on every contender alike.
    let timings = try await interleavedMedianSeconds(runs: options.runs, contenders: 4, setup: { _ in scratch.remove(file) }) { contender in
        switch contender {
        case 0:
            let db = try RawSQLite.open(scratch.path(file))
            try RawSQLite.insert(frameworks, into: db)
            _ = GRDBSQLiteClose(db)
        case 1:
            let store = try await Store.open(at: scratch.path(file))
            try await store.write { db in for framework in frameworks { try db.frameworks.insert(framework) } }
            await store.close()
        case 2: try GRDBBaseline.insertCachedStatement(frameworks, into: try GRDBBaseline.open(scratch.path(file)))
        default: try GRDBBaseline.insertCodable(frameworks, into: try GRDBBaseline.open(scratch.path(file)))
        }
    }
    let (raw, ours, grdbStatement, grdbCodable) = (timings[0], timings[1], timings[2], timings[3])
    results.append(Result(workload: "insert \(n) frameworks, one write", ours: "\(ms(ours)) (\(rate(n, ours)))",
                          baseline: "raw C \(ms(raw)); GRDB statement \(ratio(grdbStatement, raw)), Codable \(ratio(grdbCodable, raw))",
                          ratio: ratio(ours, raw), target: "<= 1.15x raw C", met: ours / raw <= 1.15))
}

// MARK: fetch all N frameworks into structs

if wanted("fetch") {
    log("fetch \(n) frameworks")
    let file = "fetch.sqlite"
    scratch.remove(file)
    do {
        // The store's own schema (migrations), so every contender reads the same file.
        let store = try await Store.open(at: scratch.path(file))
        try await store.frameworks.insert(frameworks)
        await store.close()
    }
    let db = try RawSQLite.open(scratch.path(file))
    let store = try await Store.open(at: scratch.path(file))
    let pool = try GRDBBaseline.open(scratch.path(file))
    let timings = try await interleavedMedianSeconds(runs: options.runs, contenders: 4) { contender in
        let count = switch contender {
        case 0: try RawSQLite.fetchAll(db).count
        case 1: try await store.frameworks.fetchAll().count
        case 2: try GRDBBaseline.fetchRowCursor(pool).count
        default: try GRDBBaseline.fetchAllCodable(pool).count
        }
        precondition(count == n)
    }
    _ = GRDBSQLiteClose(db)
    await store.close()
    let (raw, ours, grdbCursor, grdbCodable) = (timings[0], timings[1], timings[2], timings[3])
    results.append(Result(workload: "fetch \(n) frameworks into structs", ours: "\(ms(ours)) (\(rate(n, ours)))",
                          baseline: "raw C \(ms(raw)); GRDB Row cursor \(ratio(grdbCursor, raw)), Codable fetchAll \(ratio(grdbCodable, raw))",
                          ratio: ratio(ours, raw), target: "<= 1.1x raw C", met: ours / raw <= 1.1))
}

// MARK: whole-process sync vs the sqlite3 CLI's JSON1 import

func cliImportScript(feed: String) -> String {
    RawSQLite.schema + """

        PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
        INSERT INTO frameworks (id, name, image_name, url_string, description)
        SELECT value->>'id', value->>'name', value->>'imageName', value->>'urlString', value->>'description'
        FROM json_each(readfile('\(feed)'), '$.frameworks') WHERE true
        ON CONFLICT (id) DO NOTHING;
        """
}

if wanted("sync"), let storectl = options.storectl, let sqlite3 = which("sqlite3") {
    let feed = scratch.path("feed.json")
    try writeFeed(frameworks, to: feed)
    let half = scratch.path("half.json")
    try writeFeed(Array(frameworks.prefix(n / 2)), to: half)
    let feedMiB = Double((try FileManager.default.attributesOfItem(atPath: feed)[.size] as? Int) ?? 0) / 1_048_576
    let script = cliImportScript(feed: feed)
    for (label, prefill) in [("empty store", nil), ("store holding half the ids", half)] as [(String, String?)] {
        log("sync \(n) records into \(label)")
        let seed = scratch.path("seed.sqlite"), seedCLI = scratch.path("seed-cli.sqlite")
        for file in ["seed.sqlite", "seed-cli.sqlite"] { scratch.remove(file) }
        if let prefill {
            try await runProcess(storectl, ["sync", prefill, "--db", seed, "--quiet", "--max-bytes", "4GiB"])
            try await runProcess(sqlite3, [seedCLI], stdin: cliImportScript(feed: prefill))
        }
        func copy(_ from: String, _ to: String) throws {
            scratch.remove((to as NSString).lastPathComponent)
            if FileManager.default.fileExists(atPath: from) { try FileManager.default.copyItem(atPath: from, toPath: to) }
        }
        let target = scratch.path("target.sqlite")
        // In turns, each run on a fresh copy of its seed (a closed store: storectl leaves no WAL).
        let timings = try await interleavedMedianSeconds(runs: options.runs, contenders: 2,
                                                         setup: { try copy($0 == 0 ? seedCLI : seed, target) }) { contender in
            if contender == 0 {
                try await runProcess(sqlite3, [target], stdin: script)
            } else {
                // A page is capped at 256 MiB by default; a million records make a bigger one.
                try await runProcess(storectl, ["sync", feed, "--db", target, "--quiet", "--max-bytes", "4GiB"])
            }
        }
        let (cli, ours) = (timings[0], timings[1])
        results.append(Result(workload: "storectl sync \(n) records (\(String(format: "%.1f", feedMiB)) MiB) into \(label)",
                              ours: ms(ours), baseline: "sqlite3 CLI JSON1 \(ms(cli))", ratio: ratio(ours, cli),
                              target: "<= 1.3x CLI", met: ours / cli <= 1.3))
    }
}

// MARK: concurrent small writes

if wanted("concurrent") {
    let tasks = 8, perTask = max(1, n / 10), total = tasks * perTask
    log("\(tasks) tasks x \(perTask) single-record writes")
    let records = makeFrameworks(total, from: 10_000_000)
    let file = "small.sqlite"
    /// The 8 tasks through the store's API; returns the transactions they took (the change
    /// log's last tx: one logged transaction per commit, in a fresh file). With `empty`, each
    /// write changes nothing: what is left is the hand-off between caller and writer (a lock,
    /// a suspension, a resumption), the floor under any write's cost.
    func storeRun(maximumWritesPerTransaction: Int, empty: Bool = false) async throws -> Int {
        var configuration = Store.Configuration()
        configuration.maximumWritesPerTransaction = maximumWritesPerTransaction
        let store = try await Store.open(at: scratch.path(file), configuration: configuration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    for index in 0..<perTask {
                        if empty { try await store.write { _ in } } else { try await store.frameworks.insert(records[task * perTask + index]) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let count = try await store.frameworks.count()
        precondition(count == (empty ? 0 : records.count))
        let transactions = try await store.read { db -> Int in
            guard case .integer(let tx)? = try db.fetchOne("SELECT max(tx) FROM change_log")?[0] else { return 0 }
            return Int(tx)
        }
        await store.close()
        return transactions
    }
    if let mode = options.profileWrites {
        let (cap, empty) = switch mode {
        case "grouped": (Store.Configuration().maximumWritesPerTransaction, false)
        case "unbatched": (1, false)
        case "empty": (Store.Configuration().maximumWritesPerTransaction, true)
        default: throw BenchmarkError("--profile-writes takes grouped, unbatched or empty")
        }
        for _ in 0..<options.runs {
            scratch.remove(file)
            let start = ContinuousClock.now
            let transactions = try await storeRun(maximumWritesPerTransaction: cap, empty: empty)
            let seconds = (ContinuousClock.now - start) / .seconds(1)
            let batching = empty ? "" : String(format: ", %.1f writes/transaction", Double(total) / Double(max(1, transactions)))
            print(String(format: "%@: %.1f µs/write", mode, seconds * 1e6 / Double(total)) + batching)
        }
        scratch.removeAll()
        exit(0)
    }
    var transactions: [Int] = []
    // Interleaved run by run, so a load that comes and goes on a shared machine weighs on all four.
    let timings = try await interleavedMedianSeconds(runs: options.runs, contenders: 4, setup: { _ in scratch.remove(file) }) { contender in
        switch contender {
        case 0: transactions.append(try await storeRun(maximumWritesPerTransaction: Store.Configuration().maximumWritesPerTransaction))
        case 1: _ = try await storeRun(maximumWritesPerTransaction: 1)
        case 3: _ = try await storeRun(maximumWritesPerTransaction: Store.Configuration().maximumWritesPerTransaction, empty: true)
        default:
            let db = try RawSQLite.open(scratch.path(file))
            try RawSQLite.insert(records, into: db, transactionPerRow: true)
            _ = GRDBSQLiteClose(db)
        }
    }
    let (ours, unbatched, raw, handOff) = (timings[0], timings[1], timings[2], timings[3])
    func microseconds(_ seconds: Double) -> String { String(format: "%.1f µs", seconds * 1e6 / Double(total)) }
    let perTransaction = Double(total) / Double(transactions.sorted()[transactions.count / 2])
    results.append(Result(
        workload: "\(tasks) tasks x \(perTask) single-record writes",
        ours: "\(rate(total, ours)), \(microseconds(ours))/write (group commit, \(String(format: "%.1f", perTransaction)) writes/transaction)",
        baseline: "target's baseline: the same tasks and API without group commit (maximumWritesPerTransaction = 1) \(rate(total, unbatched)), \(microseconds(unbatched))/write; "
            + "raw C, one thread, one transaction per row \(rate(total, raw)); "
            + "floor: the same tasks writing nothing (caller-writer hand-off) \(microseconds(handOff))/write",
        ratio: String(format: "%.1fx vs no group commit; %.1fx vs raw C", unbatched / ours, raw / ours),
        target: ">= 3x throughput vs no group commit", met: unbatched / ours >= 3))
}

// MARK: concurrent image requests

if wanted("images") {
    log("1,000 concurrent image requests for 100 URLs")
    let downloads = Counter()
    var configuration = Store.Configuration()
    configuration.transport = HTTPTransport { request in
        await downloads.increment()
        try await Task.sleep(for: .milliseconds(5))
        return HTTPResponse(url: request.url, status: 200, headers: ["Content-Type": "image/png"], body: Data(repeating: 7, count: 4096))
    }
    scratch.remove("images.sqlite")
    let store = try await Store.open(at: scratch.path("images.sqlite"), configuration: configuration)
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for request in 0..<1000 {
            group.addTask { _ = try await store.images.load("https://images.example/\(request % 100).png") }
        }
        try await group.waitForAll()
    }
    let elapsed = ContinuousClock.now - start
    let count = await downloads.value
    results.append(Result(workload: "1,000 concurrent image requests for 100 URLs", ours: "\(count) downloads in \(elapsed)",
                          baseline: "100 distinct URLs", ratio: "\(count)/100", target: "exactly 100 downloads", met: count == 100))
    await store.close()
}

// MARK: observation across processes

/// How long after another process commits a change this process's observer hears of it,
/// measured from the commit's own timestamp (the change log's committed_at, written inside the
/// committing transaction), not from when a process was started. The tests only check that such
/// changes arrive; the one-second promise is checked here.
if wanted("observation"), let storectl = options.storectl {
    let commits = 20
    log("observation latency: \(commits) commits by storectl processes")
    scratch.remove("observed.sqlite")
    let path = scratch.path("observed.sqlite")
    let store = try await Store.open(at: path)
    let changes = await store.changesFromNow(of: [.framework])
    let collector = Task { () -> [(Int64, Date)] in
        var arrivals: [(Int64, Date)] = []
        for await batch in changes {
            arrivals.append((batch.transaction, Date()))
            if arrivals.count == commits { break }
        }
        return arrivals
    }
    for index in 0..<commits {
        try await runProcess(storectl, ["frameworks", "add", "--db", path, "--id", "observed-\(index)", "--name", "Observed",
                                        "--image-name", "observed", "--url", "https://example.com/o", "--description", "d"])
    }
    let arrivals = await collector.value
    let parser = ISO8601DateFormatter()
    parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    var latencies: [Double] = []
    for (transaction, arrival) in arrivals {
        let row = try await store.read { try $0.fetchOne("SELECT committed_at FROM change_log WHERE tx = ?", [.integer(transaction)]) }
        guard let text = row?[0].textValue, let committed = parser.date(from: text) else { continue }
        latencies.append(arrival.timeIntervalSince(committed))
    }
    await store.close()
    latencies.sort()
    let median = latencies.isEmpty ? .infinity : latencies[latencies.count / 2]
    let worst = latencies.last ?? .infinity
    results.append(Result(
        workload: "observation latency: \(commits) commits by other storectl processes",
        ours: "median \(ms(median)), max \(ms(worst)) (\(latencies.count)/\(commits) seen)",
        baseline: "poll interval 100 ms", ratio: String(format: "%.2fx", worst / 1.0),
        target: "every commit seen, each within 1 s of its commit", met: latencies.count == commits && worst <= 1.0))
}

// MARK: peak memory of a large sync

if let records = options.memoryRecords, let storectl = options.storectl, let python = which("python3"), let sqlite3 = which("sqlite3") {
    log("peak memory of a \(records)-record sync")
    let feed = scratch.path("large.json")
    try writeFeed(makeFrameworks(records), to: feed)
    let size = (try FileManager.default.attributesOfItem(atPath: feed)[.size] as? Int) ?? 1
    let measure = "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdin=sys.stdin, stdout=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    let ours = Int(try await runProcess(python, ["-c", measure, storectl, "sync", feed, "--db", scratch.path("large.sqlite"), "--quiet", "--max-bytes", "4GiB"])
        .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    let cli = Int(try await runProcess(python, ["-c", measure, sqlite3, scratch.path("large-cli.sqlite")], stdin: cliImportScript(feed: feed))
        .trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    let feedMB = Double(size) / 1e6
    results.append(Result(workload: "peak memory, \(records)-record sync (\(String(format: "%.0f", feedMB)) MB feed)",
                          ours: String(format: "%.0f MB (%.2fx feed)", Double(ours) / 1000, Double(ours) * 1000 / Double(size)),
                          baseline: String(format: "sqlite3 CLI %.0f MB (%.2fx)", Double(cli) / 1000, Double(cli) * 1000 / Double(size)),
                          ratio: String(format: "%.2fx feed", Double(ours) * 1000 / Double(size)), target: "<= 2x feed",
                          met: Double(ours) * 1000 / Double(size) <= 2))
}

// MARK: report

actor Counter {
    private(set) var value = 0
    func increment() { value += 1 }
}

let date = Date().formatted(.iso8601)
print("Store benchmarks, \(date), N = \(n), median of \(options.runs) runs, \(ProcessInfo.processInfo.activeProcessorCount) cores, SQLite \(sqliteVersion())")
print("")
scratch.removeAll()
print("| workload | ours | baseline(s) | ratio | target | met |")
print("|---|---|---|---|---|---|")
for result in results {
    print("| \(result.workload) | \(result.ours) | \(result.baseline) | \(result.ratio) | \(result.target) | \(result.met.map { $0 ? "yes" : "NO" } ?? "-") |")
}
