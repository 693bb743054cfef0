import Foundation

/// Where each key of a feed first appeared (sent or deleted), per kind: what duplicate reports
/// quote. Held in memory up to `memoryLimit` keys (about 15 MB), then in a private temporary
/// SQLite database on disk, so a feed of millions of records is checked in bounded memory.
/// Feeds under the limit never touch the disk.
///
/// Keys are compared byte for byte (UTF-8), as SQLite compares TEXT keys; the disk table's
/// BINARY collation does the same.
struct FeedKeyRegistry {
    static let defaultMemoryLimit = 1 << 18

    /// Keys held in memory before the rest go to disk (tests set it low).
    let memoryLimit: Int
    /// One table per kind (`FeedValidator`'s slots: the built-in kinds, then the app's).
    private var memory: [[ExactKey: KeyLocation]]
    /// Per kind, the keys that came in ascending byte order from the first one on (a feed
    /// written from a table usually comes so): each is only compared with the last, not hashed,
    /// and looked up by binary search. Keys out of that order go to `memory`.
    private var ascending: [[(key: String, location: KeyLocation)]]
    private var memoryCount = 0
    private var disk: Database?
    /// A failure of the disk table (a full disk, say): reported by `FeedValidator` as itself.
    private(set) var failure: (any Error)?

    init(memoryLimit: Int = FeedKeyRegistry.defaultMemoryLimit, slots: Int = 4) {
        self.memoryLimit = memoryLimit
        memory = Array(repeating: [:], count: slots)
        ascending = Array(repeating: [], count: slots)
    }

    /// Makes room for about `count` more keys of `slot` in memory (never beyond the memory
    /// limit), so a feed's table is allocated once instead of being rehashed at every doubling:
    /// growing one key by one from 1,024 to 100,000 rehashed every key about twice, a tenth of
    /// a sync's time.
    mutating func reserve(_ count: Int, slot: Int) {
        guard disk == nil else { return }
        let room = min(count, memoryLimit - memoryCount)
        if memory[slot].isEmpty {
            // So far in order: the run is what grows.
            let wanted = ascending[slot].count + room
            if wanted > ascending[slot].capacity { ascending[slot].reserveCapacity(wanted) }
        } else {
            let wanted = memory[slot].count + room
            if wanted > memory[slot].capacity { memory[slot].reserveCapacity(wanted) }
        }
    }

    /// Notes `key` at `location` unless it was noted before; then returns where it first was
    /// (and notes nothing).
    mutating func insert(_ key: String, slot: Int, at location: KeyLocation) -> KeyLocation? {
        if disk == nil, memoryCount < memoryLimit, memory[slot].isEmpty,
            ascending[slot].last.map({ FeedFields.compareBytes($0.key, key) < 0 }) ?? true
        {
            // After every key so far: new, and the run stays in order.
            ascending[slot].append((key, location))
            memoryCount += 1
            return nil
        }
        if let first = ascendingLocation(of: key, slot: slot) { return first }
        let exact = ExactKey(key)
        if disk == nil, memoryCount < memoryLimit {
            if memory[slot].isEmpty { memory[slot].reserveCapacity(1024) }
            // One hash lookup on the common path: insert, and look at what was there.
            if let first = memory[slot].updateValue(location, forKey: exact) {
                memory[slot][exact] = first
                return first
            }
            memoryCount += 1
            return nil
        }
        if let first = memory[slot][exact] { return first }
        do {
            return try insertOnDisk(key, slot: slot, at: location)
        } catch {
            if failure == nil { failure = error }
            return nil
        }
    }

    /// Where `key` is in the slot's ascending run, if it is there (binary search).
    private func ascendingLocation(of key: String, slot: Int) -> KeyLocation? {
        let run = ascending[slot]
        var (low, high) = (0, run.count)
        while low < high {
            let middle = (low + high) / 2
            let order = FeedFields.compareBytes(run[middle].key, key)
            if order == 0 { return run[middle].location }
            if order < 0 { low = middle + 1 } else { high = middle }
        }
        return nil
    }

    private mutating func insertOnDisk(_ key: String, slot: Int, at location: KeyLocation) throws -> KeyLocation? {
        let db: Database
        if let disk {
            db = disk
        } else {
            db = try Database.scratch(
                schema: """
                    CREATE TABLE keys (slot INTEGER NOT NULL, key TEXT NOT NULL, page INTEGER NOT NULL, position INTEGER NOT NULL,
                                       tombstone INTEGER NOT NULL, PRIMARY KEY (slot, key)) WITHOUT ROWID
                    """)
            disk = db
        }
        let insert = try db.cachedStatement(literal: "INSERT INTO keys VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")
        try insert.bind(Int64(slot), at: 1)
        try insert.bind(key, at: 2)
        try insert.bind(Int64(location.page), at: 3)
        try insert.bind(Int64(location.index), at: 4)
        try insert.bind(Int64(location.isTombstone ? 1 : 0), at: 5)
        defer { insert.reset() }
        _ = try insert.step()
        guard db.changes == 0 else { return nil }
        let find = try db.cachedStatement(literal: "SELECT page, position, tombstone FROM keys WHERE slot = ? AND key = ?")
        try find.bind(Int64(slot), at: 1)
        try find.bind(key, at: 2)
        defer { find.reset() }
        guard try find.step() else { return nil }
        return KeyLocation(
            page: Int32(truncatingIfNeeded: find.int(0)), index: Int32(truncatingIfNeeded: find.int(1)),
            isTombstone: find.int(2) != 0)
    }
}

/// Where a key first appeared: a page (index into the validator's page names) and a record's
/// or a tombstone's index in its array. Twelve bytes, so a quarter of a million keys stay small.
struct KeyLocation {
    let page: Int32
    let index: Int32
    let isTombstone: Bool
}

/// A key compared byte for byte (UTF-8), as SQLite compares TEXT keys (Swift's `String ==`
/// treats canonically equivalent strings as equal). Hashes the bytes in place, allocating nothing.
struct ExactKey: Hashable {
    let text: String
    init(_ text: String) { self.text = text }

    static func == (lhs: ExactKey, rhs: ExactKey) -> Bool { FeedFields.sameBytes(lhs.text, rhs.text) }

    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
