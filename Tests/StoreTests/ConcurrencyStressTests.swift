import Foundation
import Testing

@testable import Store

/// Many writers and readers on one store file in one process: the single writer (group commit)
/// lands every write, and WAL readers never fail and never see the store go back in time.
///
/// The suite's name contains "Concurrency" so that CI can run it alone, and under the thread
/// sanitizer: `swift test --sanitize=thread --filter "Concurrency|Writer|SharedFile"`.
/// `STORE_STRESS_WRITES_PER_TASK` shrinks (or grows) the run, e.g. for a slow sanitizer build.
/// Heavy (10-60 s on two cores): it would starve the timing-sensitive tests running beside it in
/// a plain `swift test`, so it runs when STORE_HEAVY_TESTS=1, as `.ci/run` does in a step of its own.
@Suite(
    "Concurrency stress: 8 writer tasks and 4 reader tasks on one store file",
    .enabled(if: ProcessInfo.processInfo.environment["STORE_HEAVY_TESTS"] == "1", "set STORE_HEAVY_TESTS=1 to run")
)
struct ConcurrencyStressTests {
    static let writerTasks = 8
    static let readerTasks = 4
    static let writesPerTask = ProcessInfo.processInfo.environment["STORE_STRESS_WRITES_PER_TASK"].flatMap(Int.init) ?? 10_000
    /// A reader runs `fetchAll` (every record) first, then at most once per this interval, and
    /// `count` otherwise. In a debug build, `fetchAll` of 80,000 records and checking them costs
    /// a quarter to half a second of CPU: 4 readers doing it every second took over half of a
    /// 2-core machine from the writer (45 s instead of 10 s).
    static let fetchAllInterval = Duration.seconds(3)
    /// The pause between two reads of one reader: readers spinning flat out would only starve the
    /// writer of CPU time on a small machine; they still make thousands of reads meanwhile.
    static let pause = Duration.milliseconds(5)
    /// Records of each `fetchAll` compared field by field with what their writer wrote.
    static let sampledPerFetchAll = 500

    static func id(task: Int, number: Int) -> String {
        let digits = String(number)
        return "w\(task)-" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }

    static func framework(task: Int, number: Int) -> Framework {
        let id = id(task: task, number: number)
        return Framework(
            id: id, name: "Framework \(number) of writer \(task)", imageName: "image-\(id)",
            urlString: "https://example.com/\(id)", description: "Written by task \(task), number \(number).")
    }

    /// What one reader saw.
    struct ReaderLog: Sendable {
        var counts: [Int] = []
        var fetchAllCount = 0
        /// Reads that threw, and snapshots that were not consistent.
        var failures: [String] = []
    }

    static func read(_ store: Store, until finished: Locked<Bool>) async -> ReaderLog {
        var log = ReaderLog()
        let clock = ContinuousClock()
        var lastFetchAll: ContinuousClock.Instant?
        // What this reader's last fetchAll saw of each writer: how many of its records.
        var seenPerTask = [Int](repeating: 0, count: writerTasks)
        var iteration = 0
        // One more round after the writers finish, so the last read sees the final state.
        var lastRound = false
        while true {
            if finished.current { lastRound = true }
            iteration += 1
            do {
                if lastRound || lastFetchAll.map({ clock.now - $0 >= fetchAllInterval }) ?? true {
                    lastFetchAll = clock.now
                    let all = try await store.frameworks.fetchAll()
                    log.fetchAllCount += 1
                    log.counts.append(all.count)
                    log.failures += check(all, seenBefore: &seenPerTask)
                } else {
                    log.counts.append(try await store.frameworks.count())
                }
            } catch {
                log.failures.append("read \(iteration): \(error)")
            }
            if lastRound { return log }
            try? await Task.sleep(for: pause)
        }
    }

    /// Checks one snapshot. Each writer inserts its records one after another, each only once the
    /// previous one has committed, so a committed snapshot holds, of each writer, exactly its
    /// first n records, and n never shrinks from one snapshot to a later one. Every record is
    /// whole: a sample is compared field by field.
    static func check(_ all: [Framework], seenBefore: inout [Int]) -> [String] {
        var problems: [String] = []
        var numbers = [[Int]](repeating: [], count: writerTasks)
        for framework in all {
            let parts = framework.id.dropFirst().split(separator: "-")
            guard framework.id.hasPrefix("w"), parts.count == 2, let task = Int(parts[0]), let number = Int(parts[1]),
                numbers.indices.contains(task)
            else {
                problems.append("unexpected id \(framework.id)")
                continue
            }
            numbers[task].append(number)
        }
        for task in 0..<writerTasks {
            let seen = numbers[task].sorted()
            if seen != Array(0..<seen.count) {
                problems.append("writer \(task)'s records are not its first \(seen.count): \(seen.prefix(10))...")
            }
            if seen.count < seenBefore[task] {
                problems.append("writer \(task): \(seen.count) records, fewer than the \(seenBefore[task]) seen before")
            }
            seenBefore[task] = seen.count
        }
        var generator = SystemRandomNumberGenerator()
        let sample = all.count <= sampledPerFetchAll ? all[...] : all.shuffled(using: &generator).prefix(sampledPerFetchAll)
        for framework in sample {
            let parts = framework.id.dropFirst().split(separator: "-")
            if let task = Int(parts.first ?? ""), let number = Int(parts.last ?? ""),
                framework != Self.framework(task: task, number: number)
            {
                problems.append("\(framework.id) is not as written: \(framework)")
            }
        }
        return problems
    }

    @Test("8 tasks x 10,000 inserts while 4 tasks read: every record lands, every read succeeds, counts never decrease")
    func writersAndReaders() async throws {
        let writerTasks = Self.writerTasks, readerTasks = Self.readerTasks, writesPerTask = Self.writesPerTask
        let total = writerTasks * writesPerTask
        try await withTemporaryStore { store, _ throws in
            let finished = Locked(false) // set once every writer has finished (or failed)
            let clock = ContinuousClock()
            let start = clock.now

            enum Outcome: Sendable {
                case writer(task: Int, error: String?)
                case reader(ReaderLog)
            }
            let outcomes = await withTaskGroup(of: Outcome.self) { group in
                for _ in 0..<readerTasks {
                    group.addTask { .reader(await Self.read(store, until: finished)) }
                }
                // The writers run in a group of their own, so the readers are told as soon as
                // the last of them is done, whether it succeeded or failed.
                group.addTask {
                    let writers = await withTaskGroup(of: Outcome.self) { writers in
                        for task in 0..<writerTasks {
                            writers.addTask {
                                do {
                                    for number in 0..<writesPerTask {
                                        try await store.frameworks.insert(Self.framework(task: task, number: number))
                                    }
                                    return .writer(task: task, error: nil)
                                } catch {
                                    return .writer(task: task, error: "\(error)")
                                }
                            }
                        }
                        var outcomes: [Outcome] = []
                        for await outcome in writers { outcomes.append(outcome) }
                        return outcomes
                    }
                    finished.withLock { $0 = true }
                    let failures = writers.compactMap { outcome -> String? in
                        if case .writer(let task, let error?) = outcome { return "writer \(task): \(error)" }
                        return nil
                    }
                    return .writer(task: -1, error: failures.isEmpty ? nil : failures.joined(separator: "\n"))
                }
                var outcomes: [Outcome] = []
                for await outcome in group { outcomes.append(outcome) }
                return outcomes
            }
            let elapsed = clock.now - start

            // Every write succeeded.
            for case .writer(_, let error?) in outcomes {
                Issue.record("a write failed: \(error)")
            }
            // Every read succeeded, saw whole records, and never saw the count go down.
            let logs = outcomes.compactMap { outcome -> ReaderLog? in
                if case .reader(let log) = outcome { return log }
                return nil
            }
            #expect(logs.count == readerTasks)
            for (index, log) in logs.enumerated() {
                #expect(log.failures.isEmpty, "reader \(index): \(log.failures.prefix(5))")
                #expect(log.fetchAllCount >= 1, "reader \(index) never ran fetchAll")
                let decreases = zip(log.counts, log.counts.dropFirst()).filter { $0 > $1 }
                #expect(decreases.isEmpty, "reader \(index) saw the count go down: \(decreases.prefix(5))")
                // Its last read began after the last write was answered, so it saw everything.
                #expect(log.counts.last == total, "reader \(index)'s last read saw \(log.counts.last ?? -1)")
            }
            // The readers really ran alongside the writers: some read saw a partly written store.
            let allCounts = logs.flatMap(\.counts)
            #expect(allCounts.contains { $0 > 0 && $0 < total }, "no read ran while the writers were writing")

            // Every record is there.
            #expect(try await store.frameworks.count() == total)
            let ids = Set(try await store.frameworks.fetchAll().map(\.id))
            #expect(ids.count == total)
            for task in 0..<writerTasks {
                for number in [0, 1, writesPerTask / 2, writesPerTask - 2, writesPerTask - 1] where number >= 0 {
                    let id = Self.id(task: task, number: number)
                    #expect(ids.contains(id), "\(id) is missing")
                    #expect(try await store.frameworks.find(id) == Self.framework(task: task, number: number))
                }
            }
            var generator = SystemRandomNumberGenerator()
            for _ in 0..<200 {
                let task = Int.random(in: 0..<writerTasks, using: &generator)
                let number = Int.random(in: 0..<writesPerTask, using: &generator)
                #expect(ids.contains(Self.id(task: task, number: number)))
            }
            #expect(try await store.read { try $0.fetchOne("PRAGMA integrity_check")?[0].textValue } == "ok")

            let reads = logs.map(\.counts.count).reduce(0, +)
            print(
                "ConcurrencyStressTests: \(total) inserts by \(writerTasks) tasks, \(reads) reads by \(readerTasks) tasks "
                    + "(\(logs.map(\.fetchAllCount).reduce(0, +)) fetchAll), in \(elapsed)")
        }
    }
}
