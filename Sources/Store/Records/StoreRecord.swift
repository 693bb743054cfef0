internal import CSQLite
import Foundation

/// A kind of record, declared in one type: its key, its table and columns, how it reads itself
/// from a feed (with problems named by JSON path) and writes itself back, and the tables change
/// observation watches. Register an app's kinds in `Store.Configuration.recordTypes`; sync,
/// validation, export, reports, dry-run and observation then handle them through one generic
/// path (`RecordTable`), and `db.records(Reminder.self)` reads and writes them.
///
/// The table itself comes from the app's own migrations (`Store.Configuration.appMigrations`).
/// The key is the first column; every column is compared and hashed for sync, so a record is
/// unchanged exactly when every column value is.
public protocol StoreRecord: Sendable {
    /// The kind: its raw value names the feed's array (`plural`) and the `deleted` member.
    /// Lowercase ASCII letters, digits and `_`, starting with a letter.
    static var kind: RecordKind { get }
    /// The SQLite table holding the records.
    static var table: String { get }
    /// The table's columns, the key column first.
    static var columns: [String] { get }
    /// The tables change observation watches for this kind (default: `table`, keyed by the
    /// first column, no date column).
    static var observedTables: [ObservedTable] { get }

    /// The record's key (its value for the first column), unique within its kind.
    var key: String { get }
    /// The record's value for each of `columns`, in order.
    var columnValues: [SQLValue] { get }
    /// A record from its stored column values, in the order of `columns`.
    init(columnValues: [SQLValue]) throws

    /// Reads a record from a feed object: each field read through `fields` that is missing or
    /// invalid is reported with its JSON path; returns nil when anything was wrong. The key
    /// field (`id`) is checked by the validator before.
    static func decode(_ fields: inout FeedFields) -> Self?
    /// The record in the feed's shape (an object), for export and for reading it back.
    var feedValue: JSONValue { get }
}

extension StoreRecord {
    /// The kind's own table, keyed by its first column, without a date column.
    public static var observedTables: [ObservedTable] { [ObservedTable(table: table, keyColumn: columns[0])] }

}

/// A table whose rows belong to records of a kind, for change observation: the table, the column
/// holding the record's key, and the date column of kinds with change dates.
public struct ObservedTable: Sendable, Hashable {
    /// The table's name.
    public var table: String
    /// The column holding the key of the record a row belongs to.
    public var keyColumn: String
    /// The column holding a date a change touches (events' `date`), if any.
    public var dateColumn: String?

    /// A table of rows belonging to records of a kind.
    public init(table: String, keyColumn: String, dateColumn: String? = nil) {
        self.table = table
        self.keyColumn = keyColumn
        self.dateColumn = dateColumn
    }
}

/// Why a registered kind cannot be used, or nil: names go into SQL and feed paths as they are.
enum RecordTypeCheck {
    /// Tables an app's kind may not take: the library's own (records, sync, the change log,
    /// migrations), whose rows the kind's methods would read and write as its own.
    /// (Index, trigger and migration-temporary names too: they share the tables' namespace.)
    static let reservedTables: Set<String> = recordTables.union([
        "change_log", "store_identity", "sync_history",
        "sync_pages", "sync_records", "sync_sources", "sync_streams", Migrator.table, Migrator.appTable,
        "events_by_date", "images_by_last_access", "sync_streams_forget", "sync_records_new", "sync_sources_new",
        "image_cache_totals",
        // A full sync's temporary table (`Reconciler.trackSeenKeys`): a temporary table hides a
        // main one of its name from unqualified SQL on its connection.
        "sync_seen",
    ]).union(libraryTriggers)

    /// The library's triggers (migration 0016): the image cache's totals, kept as its rows change.
    static let libraryTriggers: Set<String> = [
        "image_cache_totals_after_insert", "image_cache_totals_after_delete", "image_cache_totals_after_update",
    ]

    /// The library's tables of records, among `reservedTables`.
    static let recordTables: Set<String> = ["frameworks", "orders", "order_items", "events", "images"]

    static func problem(_ type: any StoreRecord.Type) -> String? {
        let name = type.kind.rawValue
        if RecordKind.allCases.contains(type.kind) { return "the kind '\(name)' is built in" }
        if !RecordKind.isPlainName(name) { return "the kind '\(name)' must be lowercase letters, digits and _" }
        if !RecordKind.isPlainName(type.table) {
            return "the table '\(type.table)' of kind '\(name)' must be lowercase letters, digits and _"
        }
        if reservedTables.contains(type.table) || type.table.hasPrefix("sqlite_") {
            return "the table '\(type.table)' of kind '\(name)' is the store's own"
        }
        if type.columns.isEmpty { return "the kind '\(name)' declares no column" }
        if let column = type.columns.first(where: { !RecordKind.isPlainName($0) }) {
            return "the column '\(column)' of kind '\(name)' must be lowercase letters, digits and _"
        }
        // Names go into the kind's SQL unquoted: `order` or `values` failed at the first use.
        // Many keywords work as names (`key`, `end`, `first`): only one SQLite cannot read is
        // refused, by compiling the shapes the kind's SQL takes.
        if let unreadable = ([type.table] + type.columns).first(where: { !compilesAsName($0) }) {
            return "the name '\(unreadable)' of kind '\(name)' is an SQL keyword SQLite cannot read as a name"
        }
        return nil
    }

    /// Whether `name` compiles unquoted as a table and column name where a kind's SQL puts one,
    /// on a scratch in-memory connection.
    static func compilesAsName(_ name: String) -> Bool {
        guard sqlite3_keyword_check(name, Int32(name.utf8.count)) != 0 else { return true }
        var handle: OpaquePointer?
        guard sqlite3_open_v2(":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nil) == SQLITE_OK else {
            sqlite3_close_v2(handle)
            return false
        }
        defer { sqlite3_close_v2(handle) }
        for sql in [
            "CREATE TABLE \(name) (\(name) TEXT PRIMARY KEY, other TEXT)",
            "SELECT \(name), \(name).\(name) FROM \(name) WHERE \(name) IS ?1 ORDER BY \(name)",
            "INSERT INTO \(name) (\(name), other) VALUES (?1, ?2) ON CONFLICT (\(name)) DO UPDATE SET \(name) = excluded.\(name)",
            "UPDATE \(name) SET \(name) = ?1 WHERE \(name) = ?2",
            "DELETE FROM \(name) WHERE \(name) = ?1",
        ] {
            if sqlite3_exec(handle, sql.hasPrefix("CREATE") ? sql : "EXPLAIN " + sql, nil, nil, nil) != SQLITE_OK { return false }
        }
        return true
    }

    /// Every problem of the registered kinds together: each one's own, a kind registered
    /// twice, two kinds on one table.
    static func problem(_ types: [any StoreRecord.Type]) -> String? {
        for type in types { if let problem = problem(type) { return problem } }
        var kinds = Set<RecordKind>(), tables = Set<String>()
        for type in types {
            if !kinds.insert(type.kind).inserted { return "the kind '\(type.kind.rawValue)' is registered twice" }
            if !tables.insert(type.table).inserted { return "two kinds share the table '\(type.table)'" }
        }
        // A feed's arrays and `deleted` members are named by plurals: a kind named as another's
        // plural (`tags` beside `tag`, `frameworks`) made every feed naming that plural under
        // `deleted` fail as a misspelling, the app's own published folder included.
        var plurals = Set(RecordKind.allCases.map { $0.plural })
        for type in types { plurals.insert(type.kind.plural) }
        for type in types where plurals.contains(type.kind.rawValue) {
            return "the kind '\(type.kind.rawValue)' is named as another kind's plural (a feed's member)"
        }
        return nil
    }

    /// Why a registered kind's table, as the migrations made it, cannot hold the kind, or nil:
    /// checked when the store opens, after its migrations. The table must exist and have every
    /// declared column (names compared as SQLite compares them, ASCII letters in any case), and
    /// its key column must be unique on its own (its PRIMARY KEY, or a UNIQUE constraint or
    /// index on it alone), not `INTEGER PRIMARY KEY` (the rowid, which takes no text), and
    /// compare keys byte for byte (BINARY collation): the store finds, replaces and reports
    /// records by that key. Without this a missing table failed at the first write, a key
    /// without a constraint took duplicates (and sync failed on SQLite's "ON CONFLICT clause
    /// does not match"), a rowid key failed every write with "datatype mismatch", and a NOCASE
    /// key let one feed record overwrite another.
    static func problem(in db: Database, _ types: [any StoreRecord.Type]) throws -> String? {
        for type in types {
            let name = "kind '\(type.kind.rawValue)'"
            let columns = try db.query("SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid", [.text(type.table)]) {
                (name: $0.text(0).lowercased(), type: $0.text(1).uppercased(), primaryKey: $0.int(2))
            }
            if columns.isEmpty { return "the table '\(type.table)' of \(name) does not exist (its app migration makes it)" }
            for column in type.columns where !columns.contains(where: { $0.name == column }) {
                return "the table '\(type.table)' of \(name) has no column '\(column)'"
            }
            let key = type.columns[0]
            // Each unique index (the primary key's of a text key, a UNIQUE constraint's, a
            // CREATE UNIQUE INDEX) on the key column alone, with that column's collation.
            let collations = try db.query(
                """
                SELECT max(x.coll) FROM pragma_index_list(?1) AS l, pragma_index_xinfo(l.name) AS x
                WHERE l."unique" = 1 AND x.key = 1 AND l.partial = 0
                GROUP BY l.name HAVING count(*) = 1 AND lower(max(x.name)) = ?2
                """, [.text(type.table), .text(key)]
            ) { $0.text(0).uppercased() }
            if collations.isEmpty {
                let keyColumn = columns.first { $0.name == key }
                if keyColumn?.primaryKey == 1, keyColumn?.type == "INTEGER", columns.filter({ $0.primaryKey > 0 }).count == 1 {
                    return
                        "the key column '\(key)' of \(name) is INTEGER PRIMARY KEY, the rowid, which holds no text: declare it TEXT PRIMARY KEY"
                }
                return "the key column '\(key)' of \(name) must be unique on its own: its PRIMARY KEY, or UNIQUE"
            }
            if !collations.contains("BINARY") {
                return "the key column '\(key)' of \(name) must compare keys byte for byte (COLLATE BINARY, not \(collations[0]))"
            }
        }
        return nil
    }

}
