import Foundation

/// Where a store stands in a published feed (version 2): the generation and the sequence number
/// it has applied, kept per source (migration 0010) and written in the same transaction as the
/// records.
struct SyncCursor: Sendable, Equatable {
    var generation: String
    var sequence: Int
}

extension SyncStateTable {
    func cursor(for source: String) throws -> SyncCursor? {
        try db.query("SELECT cursor_generation, cursor_sequence FROM sync_sources WHERE source = ?", [.text(source)]) { row in
            row.optionalText(0).map { SyncCursor(generation: $0, sequence: Int(row.int64(1))) }
        }.first ?? nil
    }

    /// Whether the cursor of `source` was found ahead of a manifest's head (see migration 0014).
    func cursorIsSuspect(for source: String) throws -> Bool {
        try db.query("SELECT cursor_suspect FROM sync_sources WHERE source = ?", [.text(source)]) { $0.int(0) }.first == 1
    }

    /// Notes that `source` served a manifest behind the cursor: the next sync that would go on
    /// from the cursor reads the snapshot instead.
    func markCursorSuspect(for source: String) throws {
        try db.execute("UPDATE sync_sources SET cursor_suspect = 1 WHERE source = ?", [.text(source)])
    }

    /// Sets (or, with nil, clears) the cursor of the source with id `sourceID`, no longer suspect.
    func setCursor(_ cursor: SyncCursor?, sourceID: Int64) throws {
        try db.execute(
            "UPDATE sync_sources SET cursor_generation = ?, cursor_sequence = ?, cursor_suspect = 0 WHERE id = ?",
            [
                cursor.map { .text($0.generation) } ?? .null, cursor.map { .integer(Int64($0.sequence)) } ?? .null,
                .integer(sourceID),
            ])
    }
}
