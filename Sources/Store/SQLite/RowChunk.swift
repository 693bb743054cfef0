internal import CSQLite
import Foundation

/// How a `RowChunk` copies a column: as the decoder will read it, through `Statement`'s
/// accessor of the same name (so SQLite converts a value as that accessor would see it).
enum ColumnCopy: Sendable {
    case text, optionalText, value
}

/// Rows of a statement copied into one buffer, to be decoded on another thread after the
/// statement has moved on.
///
/// Why: `Store`'s async `fetchAll` steps its statement on a reader connection's thread while
/// the caller's task decodes the rows already copied (`ReaderPool.stream`), so the two halves
/// of a large fetch overlap on two cores, and the records' strings are allocated on the
/// caller's thread, where they are used and freed, not on the reader's
/// (`Benchmarks/Profiles/fetch.md`). Each value is a tag byte, then 8 bytes (integer, real) or a
/// 4-byte length and the bytes (text, blob), in the machine's byte order. Four bytes hold any
/// length: "the maximum number of bytes in a string or BLOB in SQLite ... can never be more
/// than 2147483647" (https://sqlite.org/limits.html, SQLITE_MAX_LENGTH).
///
/// Filled, then handed over: copies share one storage (it is not copied on write), so a chunk
/// is never appended to once a copy of it has been taken (`Store.copyRows` starts a new one).
struct RowChunk: Sendable {
    let columns: [ColumnCopy]
    private let storage: Storage
    private(set) var rowCount = 0
    /// On a fetch's first chunk: how many rows the same statement returned last time (what the
    /// caller's array reserves; see `Statement.lastRowCount`), or 0.
    var rowCountHint = 0

    private enum Tag: UInt8 { case null, integer, real, text, blob }

    /// The chunk's bytes, written with plain stores and `memcpy` (with an `Array`'s appends, a
    /// few per value, the copy cost about as much as the decoding it moves off the reader).
    private final class Storage: @unchecked Sendable {
        // Why @unchecked Sendable is safe: the reader's thread writes a chunk's storage until it
        // hands the chunk over (`ReaderPool.stream`'s continuation, which orders the writes
        // before the caller's reads), and never touches it after; the caller only reads it.
        var base: UnsafeMutableRawPointer
        var count = 0
        var capacity: Int

        init(capacity: Int) {
            self.capacity = max(64, capacity)
            base = .allocate(byteCount: self.capacity, alignment: 8)
        }

        func reserve(_ extra: Int) {
            guard count + extra > capacity else { return }
            let grown = max(capacity * 2, count + extra)
            let new = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 8)
            new.copyMemory(from: base, byteCount: count)
            base.deallocate()
            base = new
            capacity = grown
        }

        deinit { base.deallocate() }
    }

    init(columns: [ColumnCopy], reservingBytes: Int) {
        self.columns = columns
        storage = Storage(capacity: reservingBytes)
    }

    var byteCount: Int { storage.count }

    /// Copies the statement's current row: first each value's bytes and size (SQLite converts
    /// here, as the accessor would), then room for the whole row at once, then the bytes, through
    /// a local cursor (the copy was as costly as the decoding it moves off the reader's thread
    /// while it grew the buffer, and reloaded its end, for every value).
    mutating func appendRow(of statement: Statement) {
        let handle = statement.handle
        let count = columns.count
        withUnsafeTemporaryAllocation(of: (tag: Tag, pointer: UnsafeRawPointer?, payload: UInt64).self, capacity: count) {
            values in
            var size = 0
            for index in 0..<count {
                let column = Int32(index)
                let value: (tag: Tag, pointer: UnsafeRawPointer?, payload: UInt64)
                switch columns[index] {
                case .text:
                    value = Self.bytes(sqlite3_column_text(handle, column), { sqlite3_column_bytes(handle, column) }, .text)
                case .optionalText:
                    value =
                        sqlite3_column_type(handle, column) == SQLITE_NULL
                        ? (.null, nil, 0)
                        : Self.bytes(sqlite3_column_text(handle, column), { sqlite3_column_bytes(handle, column) }, .text)
                case .value:
                    switch sqlite3_column_type(handle, column) {
                    case SQLITE_INTEGER: value = (.integer, nil, UInt64(bitPattern: sqlite3_column_int64(handle, column)))
                    case SQLITE_FLOAT: value = (.real, nil, sqlite3_column_double(handle, column).bitPattern)
                    case SQLITE_TEXT:
                        value = Self.bytes(sqlite3_column_text(handle, column), { sqlite3_column_bytes(handle, column) }, .text)
                    case SQLITE_BLOB:
                        value = Self.bytes(sqlite3_column_blob(handle, column), { sqlite3_column_bytes(handle, column) }, .blob)
                    default: value = (.null, nil, 0)
                    }
                }
                values[index] = value
                switch value.tag {
                case .null: size += 1
                case .integer, .real: size += 9
                case .text, .blob: size += 5 + Int(value.payload)
                }
            }
            storage.reserve(size)
            var out = storage.base + storage.count
            for index in 0..<count {
                let value = values[index]
                out.storeBytes(of: value.tag.rawValue, as: UInt8.self)
                switch value.tag {
                case .null: out += 1
                case .integer, .real:
                    (out + 1).storeBytes(of: value.payload, as: UInt64.self)
                    out += 9
                case .text, .blob:
                    (out + 1).storeBytes(of: UInt32(value.payload), as: UInt32.self)
                    if let pointer = value.pointer, value.payload > 0 {
                        (out + 5).copyMemory(from: pointer, byteCount: Int(value.payload))
                    }
                    out += 5 + Int(value.payload)
                }
            }
            storage.count += size
        }
        rowCount += 1
    }

    /// A text or blob value: its bytes and their count (asked after the pointer, as SQLite's
    /// documentation advises); none for NULL.
    private static func bytes(
        _ pointer: UnsafeRawPointer?, _ count: () -> Int32, _ tag: Tag
    ) -> (tag: Tag, pointer: UnsafeRawPointer?, payload: UInt64) {
        guard let pointer else { return (tag, nil, 0) }
        return (tag, pointer, UInt64(max(0, count())))
    }

    /// Calls `body` with each row, in order.
    func forEachRow(_ body: (ChunkRow) throws -> Void) rethrows {
        let buffer = UnsafeRawBufferPointer(start: storage.base, count: storage.count)
        let offsets = UnsafeMutableBufferPointer<Int>.allocate(capacity: max(1, columns.count))
        defer { offsets.deallocate() }
        var position = 0
        for _ in 0..<rowCount {
            for column in columns.indices {
                offsets[column] = position
                switch Tag(rawValue: buffer[position]) {
                case .integer, .real: position += 9
                case .text, .blob: position += 5 + Int(buffer.loadUnaligned(fromByteOffset: position + 1, as: UInt32.self))
                default: position += 1
                }
            }
            try body(ChunkRow(buffer: buffer, offsets: UnsafeBufferPointer(offsets)))
        }
        withExtendedLifetime(storage) {}
    }

    /// A row of a `RowChunk`, valid only inside `forEachRow`'s body.
    struct ChunkRow: RowReader {
        fileprivate let buffer: UnsafeRawBufferPointer
        fileprivate let offsets: UnsafeBufferPointer<Int>

        private func tag(_ index: Int32) -> Tag { Tag(rawValue: buffer[offsets[Int(index)]]) ?? .null }

        private func bytes(_ index: Int32) -> UnsafeRawBufferPointer {
            let start = offsets[Int(index)]
            let count = Int(buffer.loadUnaligned(fromByteOffset: start + 1, as: UInt32.self))
            return UnsafeRawBufferPointer(rebasing: buffer[(start + 5)..<(start + 5 + count)])
        }

        private func eightBytes(_ index: Int32) -> UInt64 {
            buffer.loadUnaligned(fromByteOffset: offsets[Int(index)] + 1, as: UInt64.self)
        }

        func text(_ index: Int32) -> String {
            switch tag(index) {
            case .text, .blob: String(decoding: bytes(index), as: UTF8.self)
            default: ""
            }
        }

        func optionalText(_ index: Int32) -> String? { tag(index) == .null ? nil : text(index) }

        func value(_ index: Int32) -> SQLValue {
            switch tag(index) {
            case .null: .null
            case .integer: .integer(Int64(bitPattern: eightBytes(index)))
            case .real: .real(Double(bitPattern: eightBytes(index)))
            case .text: .text(text(index))
            case .blob: .blob(Data(bytes(index)))
            }
        }
    }
}
