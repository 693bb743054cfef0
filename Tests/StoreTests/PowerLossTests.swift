import Foundation
import PowerLossVFS
import StoreTestSupport
import Testing

@testable import Store

/// Simulated power loss (issue 15): each scenario runs through the `powerloss` VFS
/// (Tests/PowerLossVFS), which at a chosen I/O cuts the power, undoing the writes not yet
/// synced (all, a seeded random subset, or the last one torn at a sector boundary). The store
/// is then reopened through the same VFS and checked: integrity, all-or-nothing syncs, whole
/// migrations, and acknowledged writes (all present under synchronous=FULL, a prefix under
/// NORMAL).
///
/// `STORE_POWER_CUTS=N` sets the number of cuts (default 40); the seed is `STORE_POWER_SEED`
/// or random, and printed with every failure.
///
/// The VFS's state is global, so the suite runs serialized; other suites never open through it.
@Suite(.serialized)
struct PowerLossTests {
    static let vfsName = "powerloss"

    /// The durability under test: the store's own setting (`.full` is synchronous=FULL, `.normal`
    /// synchronous=NORMAL); `pragmaOverride` (the deliberately broken synchronous=OFF variant)
    /// runs after it on the writer's connection.
    static func configuration(synchronousFull: Bool, pragmaOverride: String? = nil) -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.vfsName = vfsName
        configuration.durability = synchronousFull ? .full : .normal
        // Checkpoints (and the WAL's restarts after them) inside the scenarios, not only at
        // close: every 16 pages instead of 1,000, which no scenario reaches.
        configuration.writerSetupSQL = ["PRAGMA wal_autocheckpoint = 16"] + (pragmaOverride.map { [$0] } ?? [])
        configuration.maximumReaders = 2
        configuration.observationPollInterval = .seconds(3600)
        return configuration
    }

    @Test func powerCutsLoseNothingAcknowledgedAndApplyNothingByHalves() async throws {
        #expect(powerloss_register(Self.vfsName) == 0)
        let environment = ProcessInfo.processInfo.environment
        let cuts = environment["STORE_POWER_CUTS"].flatMap { Int($0) } ?? 40
        let seed = environment["STORE_POWER_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        var random = SplitMix(seed: seed)
        var totals = Tally()
        var totalIO: [String: Int64] = [:]
        var failures: [String] = []
        let scenarios = Scenario.all
        for index in 0..<cuts {
            let scenario = scenarios[index % scenarios.count]
            let full = (index / scenarios.count) % 2 == 0
            // A plain disk, then what the unix VFS reports (powersafe overwrite: no padding of
            // synced WAL commits), in turns.
            let device = (index / (scenarios.count * 2)) % 2 == 0 ? 0 : Int32(POWERLOSS_POWERSAFE_OVERWRITE)
            let key = "\(scenario.name)-\(full)-\(device)"
            if totalIO[key] == nil {
                totalIO[key] = try await PowerCut.dryRun(scenario, synchronousFull: full, device: device)
            }
            let total = max(1, totalIO[key]!)
            let at = Int64(random.next() % UInt64(total)) + 1
            let mode = Int32(random.next() % 3)
            let cutSeed = random.next()
            let tally = try await PowerCut.run(scenario, synchronousFull: full, device: device, at: at, mode: mode, seed: cutSeed)
            totals.add(tally)
            if !tally.problems.isEmpty {
                failures.append(
                    "\(scenario.name) \(full ? "FULL" : "NORMAL") device \(device) cut at I/O \(at) of \(total), mode \(mode): \(tally.problems.joined(separator: "; "))"
                )
            }
        }
        print(
            "power cuts: \(totals.cuts), corrupt: \(totals.corrupt), half-applied: \(totals.halfApplied), acknowledged lost: \(totals.acknowledgedLost)"
        )
        print(
            "(cuts that came before the scenario ended: \(totals.fired); unsynced writes dropped or torn: \(totals.droppedWrites); cuts that lost acknowledged writes under NORMAL, as it may: \(totals.allowedLosses); seed \(seed))"
        )
        #expect(totals.cuts == cuts)
        #expect(totals.fired * 2 > cuts, "most cuts should land inside their scenario")
        #expect(
            failures.isEmpty,
            "seed \(seed) (STORE_POWER_SEED=\(seed) repeats it):\n\(failures.prefix(20).joined(separator: "\n"))")
    }

    /// The checker bites: with synchronous=OFF no commit is ever synced, so a cut that drops
    /// the unsynced writes loses acknowledged writes, and the same check as under FULL says so.
    @Test func synchronousOffLosesAcknowledgedWritesAndTheCheckerSeesIt() async throws {
        #expect(powerloss_register(Self.vfsName) == 0)
        let scenario = Scenario.concurrentWrites
        let off = "PRAGMA synchronous = OFF"
        let total = try await PowerCut.dryRun(scenario, synchronousFull: true, pragmaOverride: off)
        var lost = 0
        for step in 2...9 {
            // Cuts through the second half, dropping every unsynced write: by then writes have
            // been acknowledged (the very last I/Os are the closing checkpoint, which syncs).
            let at = max(1, total * Int64(step) / 10)
            let tally = try await PowerCut.run(
                scenario, synchronousFull: true, at: at, mode: Int32(POWERLOSS_DROP_ALL), seed: UInt64(step), pragmaOverride: off)
            lost += tally.acknowledgedLost
        }
        #expect(lost > 0, "synchronous=OFF lost no acknowledged write: the VFS or the checker does not bite")
    }
}

// MARK: - Running a cut

struct Tally {
    var cuts = 0, corrupt = 0, halfApplied = 0, acknowledgedLost = 0
    /// Cuts that came before the scenario ended (a run can make fewer I/Os than its dry run),
    /// and the unsynced writes they dropped or tore.
    var fired = 0, droppedWrites = 0
    /// Acknowledged writes lost under NORMAL, which allows it (so counted, not failed): shows
    /// the cuts reach what FULL must keep.
    var allowedLosses = 0
    var problems: [String] = []

    mutating func add(_ other: Tally) {
        cuts += other.cuts
        fired += other.fired
        droppedWrites += other.droppedWrites
        allowedLosses += other.allowedLosses
        corrupt += other.corrupt
        halfApplied += other.halfApplied
        acknowledgedLost += other.acknowledgedLost
        problems += other.problems
    }
}

/// What a scenario's body saw: which writes were started and acknowledged, in order.
final class Acknowledgements: Sendable {
    struct Write: Sendable { var key: String; var submitted: Int; var acknowledged: Int? }
    private let state = Locked<(clock: Int, writes: [String: Write])>((0, [:]))

    func submitted(_ key: String) {
        state.withLock {
            $0.clock += 1; $0.writes[key] = Write(key: key, submitted: $0.clock, acknowledged: nil)
        }
    }

    func acknowledged(_ key: String) {
        state.withLock {
            $0.clock += 1; $0.writes[key]?.acknowledged = $0.clock
        }
    }

    var writes: [Write] { state.current.writes.values.sorted { $0.submitted < $1.submitted } }
    func isAcknowledged(_ key: String) -> Bool { state.current.writes[key]?.acknowledged != nil }
}

enum PowerCut {
    /// Runs the scenario without a cut; returns the I/Os it made (opening to closing).
    static func dryRun(
        _ scenario: Scenario, synchronousFull: Bool, device: Int32 = 0, pragmaOverride: String? = nil
    ) async throws -> Int64 {
        try await TemporaryDirectory.with(prefix: "PowerLoss") { directory in
            let configuration = PowerLossTests.configuration(synchronousFull: synchronousFull, pragmaOverride: pragmaOverride)
            powerloss_reset()
            powerloss_set_device_characteristics(device)
            try await scenario.setup(directory, configuration)
            powerloss_reset()
            let acknowledgements = Acknowledgements()
            await scenario.body(directory, configuration, acknowledgements)
            let count = powerloss_io_count()
            powerloss_reset()
            return count
        }
    }

    static func run(
        _ scenario: Scenario, synchronousFull: Bool, device: Int32 = 0, at: Int64, mode: Int32, seed: UInt64,
        pragmaOverride: String? = nil
    ) async throws -> Tally {
        try await TemporaryDirectory.with(prefix: "PowerLoss") { directory in
            let configuration = PowerLossTests.configuration(synchronousFull: synchronousFull, pragmaOverride: pragmaOverride)
            powerloss_reset()
            powerloss_set_device_characteristics(device)
            try await scenario.setup(directory, configuration)
            powerloss_reset()
            powerloss_arm(at, mode, seed)
            let acknowledgements = Acknowledgements()
            await scenario.body(directory, configuration, acknowledgements)
            let fired = powerloss_did_cut() != 0
            let dropped = powerloss_dropped_writes()
            // Power restored: counters reset, nothing armed; reopen through the same VFS.
            powerloss_reset()
            var tally = Tally(cuts: 1, fired: fired ? 1 : 0, droppedWrites: Int(dropped))
            // A machine that lost power keeps no open file: were a connection of the body still
            // open, its -shm (the WAL index) would outlive the cut and the reopen would not
            // recover the WAL as after a real one.
            let open = openFiles(under: directory.path)
            if !open.isEmpty {
                tally.corrupt += 1
                tally.problems.append("files still open after the body: \(open)")
                return tally
            }
            do {
                let database = try Database(
                    path: directory.databasePath,
                    options: .init(readOnly: false, create: true, busyTimeout: .seconds(5), vfsName: PowerLossTests.vfsName))
                let integrity = try database.fetchAll("PRAGMA integrity_check").compactMap { $0[0].textValue }
                if integrity != ["ok"] {
                    tally.corrupt += 1
                    tally.problems.append("integrity_check: \(integrity.prefix(3))")
                    return tally
                }
                try scenario.check(database, directory, configuration, acknowledgements, synchronousFull, &tally)
            } catch {
                tally.corrupt += 1
                tally.problems.append("reopening failed: \(error)")
            }
            powerloss_reset()
            return tally
        }
    }
}

/// The files under `folder` this process has open (Linux's /proc/self/fd; elsewhere none known).
func openFiles(under folder: String) -> [String] {
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return descriptors.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
        .filter { $0.hasPrefix(folder + "/") }
}

// MARK: - Scenarios

struct Scenario: Sendable {
    var name: String
    /// Before the power can go: prepares the store (through the VFS, closed, so all synced).
    var setup: @Sendable (TemporaryDirectory, Store.Configuration) async throws -> Void = { _, _ in }
    /// The work the cut interrupts; errors after the cut are expected and swallowed.
    var body: @Sendable (TemporaryDirectory, Store.Configuration, Acknowledgements) async -> Void
    /// After the cut, on a connection through the VFS: counts what is wrong.
    var check: @Sendable (Database, TemporaryDirectory, Store.Configuration, Acknowledgements, Bool, inout Tally) throws -> Void

    static let all: [Scenario] = [sync, concurrentWrites, migrations, imagePrune]

    static func createStore(_ directory: TemporaryDirectory, _ configuration: Store.Configuration) async throws {
        let store = try await Store.open(at: directory.databasePath, configuration: configuration)
        await store.close()
    }

    /// Opens, runs `work`, closes; any error (the power is gone) just ends it.
    static func withStoreIgnoringErrors(
        _ directory: TemporaryDirectory, _ configuration: Store.Configuration, _ work: (Store) async throws -> Void
    ) async {
        guard let store = try? await Store.open(at: directory.databasePath, configuration: configuration) else { return }
        try? await work(store)
        await store.close()
    }

    static func ids(_ database: Database, _ sql: String) throws -> Set<String> {
        Set(try database.fetchAll(sql).compactMap { $0[0].textValue })
    }

    static func tableExists(_ database: Database, _ name: String) throws -> Bool {
        try database.fetchOne("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(name)]) != nil
    }

    // A three-page local feed: frameworks and images with inline data, then events, then orders.
    static let feedFrameworks = (0..<40).map { "f-\($0)" }
    static let feedEvents = (0..<30).map { "e-\($0)" }
    static let feedOrders = (0..<20).map { "o-\($0)" }
    static let feedImages = (0..<12).map { "https://example.com/img/\($0).png" }

    static func writeFeed(_ directory: TemporaryDirectory) throws -> String {
        func json(_ object: Any) throws -> Data { try JSONSerialization.data(withJSONObject: object) }
        let imageBytes = Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let page1: [String: Any] = [
            "version": 1,
            "frameworks": feedFrameworks.map {
                [
                    "id": $0, "name": "Name \($0)", "imageName": $0, "urlString": "https://example.com/\($0)",
                    "description": String(repeating: "description of \($0). ", count: 20),
                ]
            },
            "images": feedImages.map { ["url": $0, "data": imageBytes.base64EncodedString(), "contentType": "image/png"] },
            "next": "page2.json",
        ]
        let page2: [String: Any] = [
            "version": 1,
            "events": feedEvents.enumerated().map { ["id": $1, "title": "Event \($1)", "date": "2026-06-\(10 + $0 % 18)"] },
            "next": "page3.json",
        ]
        let page3: [String: Any] = [
            "version": 1,
            "orders": feedOrders.map {
                [
                    "id": $0, "placedAt": "2026-11-20T09:30:00Z",
                    "items": [["itemName": "Milk", "price": 2.49, "aisle": 3, "quantity": 2]],
                ]
            },
        ]
        _ = try directory.write(try json(page2), to: "page2.json")
        _ = try directory.write(try json(page3), to: "page3.json")
        return try directory.write(try json(page1), to: "page1.json")
    }

    static let sync = Scenario(
        name: "sync",
        setup: { directory, configuration in
            _ = try writeFeed(directory)
            try await createStore(directory, configuration)
        },
        body: { directory, configuration, acknowledgements in
            await withStoreIgnoringErrors(directory, configuration) { store in
                acknowledgements.submitted("sync")
                _ = try await store.sync(from: FeedSource(directory.file("page1.json")))
                acknowledgements.acknowledged("sync")
            }
        },
        check: { database, _, _, acknowledgements, full, tally in
            let kinds: [(String, Set<String>)] = [
                ("SELECT id FROM frameworks", Set(feedFrameworks)), ("SELECT id FROM events", Set(feedEvents)),
                ("SELECT id FROM orders", Set(feedOrders)), ("SELECT url FROM images", Set(feedImages)),
            ]
            var present: [Int] = []
            for (sql, expected) in kinds { present.append(try ids(database, sql).intersection(expected).count) }
            let all = kinds.map(\.1.count)
            let nothing = present.allSatisfy { $0 == 0 }
            if present != all && !nothing {
                tally.halfApplied += 1
                tally.problems.append("sync half applied: \(present) of \(all)")
            } else if nothing && acknowledgements.isAcknowledged("sync") {
                if !full { tally.allowedLosses += 1; return }
                tally.acknowledgedLost += 1
                tally.problems.append("acknowledged sync lost")
            }
        })

    static let concurrentWrites = Scenario(
        name: "concurrent-writes",
        setup: { directory, configuration in try await createStore(directory, configuration) },
        body: { directory, configuration, acknowledgements in
            await withStoreIgnoringErrors(directory, configuration) { store in
                await withTaskGroup(of: Void.self) { group in
                    for task in 0..<8 {
                        group.addTask {
                            for index in 0..<6 {
                                let id = "t\(task)-\(index)"
                                acknowledgements.submitted(id)
                                do {
                                    try await store.frameworks.insert(
                                        Framework(
                                            id: id, name: id, imageName: id, urlString: "https://example.com/\(id)",
                                            description: id))
                                } catch { return }
                                acknowledgements.acknowledged(id)
                            }
                        }
                    }
                }
            }
        },
        check: { database, _, _, acknowledgements, full, tally in
            let present = try ids(database, "SELECT id FROM frameworks")
            let writes = acknowledgements.writes
            let lost = writes.filter { $0.acknowledged != nil && !present.contains($0.key) }
            if full {
                if !lost.isEmpty {
                    tally.acknowledgedLost += 1
                    tally.problems.append("acknowledged writes lost under FULL: \(lost.map(\.key).sorted())")
                }
            } else {
                // A prefix: a write started after a lost one was acknowledged must be lost too
                // (it committed later).
                if !lost.isEmpty { tally.allowedLosses += 1 }
                let firstLost = lost.compactMap(\.acknowledged).min()
                if let firstLost, let later = writes.first(where: { $0.submitted > firstLost && present.contains($0.key) }) {
                    tally.acknowledgedLost += 1
                    tally.problems.append("not a prefix under NORMAL: \(later.key) present, an earlier acknowledged write lost")
                }
            }
        })

    /// The schema of a fully migrated store, to compare a reopened one with.
    static func schema(_ database: Database) throws -> [String] {
        try database.fetchAll("SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master ORDER BY type, name")
            .compactMap { $0[0].textValue }
    }

    static let migrations = Scenario(
        name: "migrations",
        body: { directory, configuration, acknowledgements in
            acknowledgements.submitted("open")
            await withStoreIgnoringErrors(directory, configuration) { store in
                acknowledgements.acknowledged("open")
                // I/O after the open returned (a write's frames, before its sync): a cut there
                // finds out whether the migrations were synced when the open returned.
                try await store.frameworks.insert(
                    Framework(id: "after-open", name: "n", imageName: "i", urlString: "https://example.com", description: "d"))
            }
        },
        check: { database, directory, configuration, acknowledgements, full, tally in
            // Each migration is whole: the rows of schema_migrations say which ran, and applying
            // the rest from there must give exactly the full schema (a half-applied migration
            // fails to re-apply or leaves a different schema).
            let applied =
                try tableExists(database, "schema_migrations")
                ? try ids(database, "SELECT CAST(version AS TEXT) FROM schema_migrations") : []
            // `Store.open` returned: every migration was applied, and under FULL synced.
            let all = Set(configuration.migrations.map { String($0.version) })
            if acknowledgements.isAcknowledged("open") && applied != all {
                if full {
                    tally.acknowledgedLost += 1
                    tally.problems.append("the store opened, then lost migrations: \(all.subtracting(applied).sorted())")
                    return
                }
                tally.allowedLosses += 1
            }
            let tables = try ids(database, "SELECT name FROM sqlite_master WHERE type = 'table'")
            if applied.isEmpty && !tables.subtracting(["schema_migrations"]).isEmpty {
                tally.halfApplied += 1
                tally.problems.append("tables without any applied migration: \(tables.sorted())")
                return
            }
            let migrated = try Database(
                path: directory.databasePath,
                options: .init(readOnly: false, create: true, busyTimeout: .seconds(5), vfsName: PowerLossTests.vfsName))
            do {
                try Migrator(migrations: configuration.migrations, now: { Date() }).migrate(migrated)
            } catch {
                tally.halfApplied += 1
                tally.problems.append("migrating on after the cut failed: \(error)")
                return
            }
            let reference = try Database(path: ":memory:", options: .init())
            try Migrator(migrations: configuration.migrations, now: { Date() }).migrate(reference)
            if try schema(migrated) != schema(reference) {
                tally.halfApplied += 1
                tally.problems.append("schema after migrating on differs from a fresh store's")
            }
        })

    static let pruneImages = (0..<16).map { "https://example.com/cache/\($0).png" }

    static let imagePrune = Scenario(
        name: "image-prune",
        setup: { directory, configuration in
            var big = configuration
            big.imageCacheBudget = 1 << 30
            let store = try await Store.open(at: directory.databasePath, configuration: big)
            for (index, url) in pruneImages.enumerated() {
                try await store.images.put(url, data: Data(repeating: UInt8(index), count: 5000))
            }
            // Which 6 a prune keeps: the most recently used (then by url, as eviction orders them).
            let kept = try await store.read { db in
                try db.fetchAll("SELECT url FROM images ORDER BY last_access_at DESC, url DESC LIMIT 6")
                    .compactMap { $0[0].textValue }
            }
            try Data(kept.sorted().joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: directory.file("kept.txt")))
            await store.close()
        },
        body: { directory, configuration, acknowledgements in
            var small = configuration
            small.imageCacheBudget = 5000 * 6
            await withStoreIgnoringErrors(directory, small) { store in
                acknowledgements.submitted("prune")
                try await store.images.prune()
                acknowledgements.acknowledged("prune")
            }
        },
        check: { database, directory, _, acknowledgements, full, tally in
            let present = try ids(database, "SELECT url FROM images")
            let sizes = try database.fetchAll("SELECT length(data) FROM images").compactMap { $0[0].integerValue }
            if sizes.contains(where: { $0 != 5000 }) {
                tally.corrupt += 1
                tally.problems.append("image bytes damaged")
            }
            // Before: all 16; after: the 6 most recently used (noted by the setup). Nothing else.
            let kept = Set(
                try String(contentsOfFile: directory.file("kept.txt"), encoding: .utf8).split(separator: "\n").map(String.init))
            if present != Set(pruneImages) && present != kept {
                tally.halfApplied += 1
                tally.problems.append("prune half applied, or the wrong images kept: \(present.count) images")
            } else if present.count == pruneImages.count && acknowledgements.isAcknowledged("prune") {
                if !full { tally.allowedLosses += 1; return }
                tally.acknowledgedLost += 1
                tally.problems.append("acknowledged prune lost")
            }
        })
}

/// A seeded random source (splitmix64), so a failing run can be repeated.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
