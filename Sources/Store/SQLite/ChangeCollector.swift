internal import CSQLite
import Foundation

/// Collects the record changes of the writer connection from SQLite's own hooks, so that every
/// committed write is observed and logged, raw SQL through `Database.execute` included, and a
/// rolled-back one never is.
///
/// Installed on the writer's connection only (readers never write). Three hooks and an
/// authorizer, all called by SQLite synchronously on the thread stepping a statement of this
/// connection; none of them runs SQL (SQLite forbids it: "The update hook implementation must
/// not do anything that will modify the database connection that invoked the update hook ...
/// Note that sqlite3_prepare_v2() and sqlite3_step() both modify their database connections",
/// https://sqlite.org/c3ref/update_hook.html):
///
/// - the **pre-update hook** (https://sqlite.org/c3ref/preupdate_blobwrite.html) appends one
///   `Change` per row of an observed table, reading the key (and an event's date) from the old
///   row (`sqlite3_preupdate_old`) and the new one (`sqlite3_preupdate_new`): a deleted event's
///   date and a moved event's old date are only there;
/// - the **commit hook** moves the collected changes to `committed` and forgets savepoints;
/// - the **rollback hook** drops them ("a transaction is said to have been rolled back if an
///   explicit "ROLLBACK" statement is executed, or an error or constraint causes an implicit
///   rollback to occur", https://sqlite.org/c3ref/commit_hook.html);
/// - the **authorizer** tells, when a statement is prepared, whether it is a `SAVEPOINT`,
///   `RELEASE` or `ROLLBACK TO`; `Statement.step` reports such statements once they ran, and
///   the collector keeps a mark per open savepoint, so a raw `ROLLBACK TO x` inside a write
///   drops what was collected since `SAVEPOINT x` (the rollback hook does not fire for it: it
///   is not a transaction rollback). Statements run through `Database.executeScript`
///   (`sqlite3_exec`: migrations) are not tracked this way.
///
/// Coalescing: within one write (from `beginWrite` on; a savepoint also starts a new span),
/// all the row changes of one record are one change: an order inserted with its items is one
/// `insert`; an `INSERT OR REPLACE` (or upsert) of an existing image is an `update`; a moved
/// event is one `update` carrying its old and new date. Rules, for a record already changed in
/// the span: insert then update = insert; insert then delete = **delete** (observers re-read a
/// record that is gone, which costs nothing and keeps the buffer append-only); update then
/// delete = delete; delete then insert = update (the REPLACE conflict resolution deletes the
/// old row first); a delete stays a delete when rows of the record's parts (order_items, by
/// ON DELETE CASCADE) change after it.
///
/// WITHOUT ROWID tables and the truncate optimisation: the update hook misses both ("The update
/// hook is not invoked when WITHOUT ROWID tables are modified." and "In the current
/// implementation, the update hook is not invoked when conflicting rows are deleted because of
/// an ON CONFLICT REPLACE clause. Nor is the update hook invoked when rows are deleted using the
/// truncate optimization.", https://sqlite.org/c3ref/update_hook.html). The pre-update hook has
/// neither gap: it is invoked "prior to each INSERT, UPDATE, and DELETE operation on a database
/// table", WITHOUT ROWID tables included (only its rowid arguments, iKey1 and iKey2, mean
/// nothing there; the collector reads keys from the columns, never from the rowid), and SQLite
/// turns the truncate optimisation off while a pre-update hook is registered (sqlite3DeleteFrom
/// in src/delete.c takes the truncate path only if `db->xPreUpdateCallback==0`), so a
/// `DELETE FROM frameworks` without WHERE reports every framework. Tested in
/// `RawWriteObservationTests`.
///
/// Apple's system SQLite is built without the pre-update hook; there the hook is not installed
/// and raw writes to observed tables are not observed (`isObserving` is false; build against a
/// SQLite compiled with SQLITE_ENABLE_PREUPDATE_HOOK, such as Homebrew's, to get them).
final class ChangeCollector {
    /// An observed table with its columns' indexes in the current schema.
    struct ResolvedTable {
        let table: ObservedKindTable
        /// The table's name as a NUL-terminated C string, compared with `strcmp` in the hook.
        let cName: [CChar]
        let keyColumn: Int32
        let dateColumn: Int32?
    }

    private struct RecordID: Hashable {
        let kind: RecordKind
        let key: String
    }

    let observedTables: [ObservedKindTable]
    private(set) var resolvedTables: [ResolvedTable] = []
    /// The `PRAGMA schema_version` the columns were resolved at.
    private var resolvedSchemaVersion: Int64?

    /// Changes collected in the open transaction, in order.
    private(set) var pending: [Change] = []
    /// Changes of the last transaction committed, until the writer takes them.
    private var committed: [Change] = []
    /// Where the current span of coalescing changes starts in `pending`.
    private var spanStart = 0
    /// Where in `pending` each record changed since `spanStart` is.
    private var positions: [RecordID: Int] = [:]
    /// Open savepoints (innermost last), each with the count of `pending` when it began.
    private var savepoints: [(name: String, mark: Int)] = []
    /// Set by the authorizer while a statement is prepared: the savepoint operation it is.
    var preparedSavepoint: SavepointStatement?
    /// While above zero, row changes are not collected (bookkeeping writes, e.g. an image's
    /// access time).
    private var pauseDepth = 0

    /// A `SAVEPOINT`, `RELEASE` or `ROLLBACK TO` statement, as the authorizer saw it prepared.
    struct SavepointStatement {
        enum Operation { case begin, release, rollback }
        let operation: Operation
        let name: String
    }

    init(observing tables: [ObservedKindTable]) {
        observedTables = tables
    }

    /// Whether this build's SQLite has the pre-update hook (false with Apple's system SQLite).
    static var isAvailable: Bool {
        #if canImport(Darwin)
            false
        #else
            true
        #endif
    }

    // MARK: Installing

    /// Registers the hooks and the authorizer on `database`'s connection. `database` keeps the
    /// collector alive for as long as the connection is open, and `uninstall` runs before it
    /// closes: the unretained context pointer never dangles.
    func install(on handle: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        #if !canImport(Darwin)
            sqlite3_preupdate_hook(
                handle,
                { context, db, operation, database, table, _, _ in
                    guard let context, let db, let database, let table else { return }
                    Unmanaged<ChangeCollector>.fromOpaque(context).takeUnretainedValue()
                        .rowWillChange(db, operation: operation, database: database, table: table)
                }, context)
        #endif
        sqlite3_commit_hook(
            handle,
            { context in
                guard let context else { return 0 }
                Unmanaged<ChangeCollector>.fromOpaque(context).takeUnretainedValue().didCommit()
                return 0 // 0: let the commit proceed
            }, context)
        sqlite3_rollback_hook(
            handle,
            { context in
                guard let context else { return }
                Unmanaged<ChangeCollector>.fromOpaque(context).takeUnretainedValue().didRollBack()
            }, context)
        sqlite3_set_authorizer(
            handle,
            { context, action, third, fourth, _, _ in
                if action == SQLITE_SAVEPOINT, let context, let third, let fourth {
                    Unmanaged<ChangeCollector>.fromOpaque(context).takeUnretainedValue()
                        .authorizedSavepoint(operation: third, name: fourth)
                }
                return SQLITE_OK
            }, context)
    }

    func uninstall(from handle: OpaquePointer) {
        #if !canImport(Darwin)
            sqlite3_preupdate_hook(handle, nil, nil)
        #endif
        sqlite3_commit_hook(handle, nil, nil)
        sqlite3_rollback_hook(handle, nil, nil)
        sqlite3_set_authorizer(handle, nil, nil)
    }

    // MARK: Columns

    /// Resolves the observed tables' column indexes (`PRAGMA table_info`) if the schema changed
    /// since they were last resolved (another process's migration included). The writer calls
    /// it before each batch, inside its transaction. A table that does not exist (yet), or lacks
    /// a column, is not observed. A schema change made inside a write affects only later writes.
    func resolveColumnsIfNeeded(_ database: Database) throws {
        let version = try database.query("PRAGMA schema_version") { $0.int64(0) }.first ?? 0
        if version == resolvedSchemaVersion { return }
        var resolved: [ResolvedTable] = []
        for table in observedTables {
            let columns = try database.query("SELECT name FROM pragma_table_info(?) ORDER BY cid", [.text(table.observed.table)])
            { $0.text(0) }
            guard let key = columns.firstIndex(of: table.observed.keyColumn) else { continue }
            let date = table.observed.dateColumn.flatMap { columns.firstIndex(of: $0) }
            if table.observed.dateColumn != nil, date == nil { continue }
            resolved.append(
                ResolvedTable(
                    table: table, cName: table.observed.table.utf8CString.map { $0 },
                    keyColumn: Int32(key), dateColumn: date.map(Int32.init)))
        }
        resolvedTables = resolved
        resolvedSchemaVersion = version
    }

    // MARK: The writer's side

    /// Starts a write: its changes coalesce among themselves, not with an earlier write's.
    func beginWrite() -> Int {
        startSpan()
        return pending.count
    }

    /// Drops the changes collected since `mark` (a write that failed and was rolled back to its
    /// savepoint).
    func truncate(to mark: Int) {
        guard mark < pending.count else { return }
        pending.removeSubrange(mark...)
        positions = positions.filter { $0.value < mark }
        spanStart = min(spanStart, mark)
    }

    /// Drops everything collected, committed or not (before a batch; after a failed commit).
    func discardAll() {
        spanStart = 0
        pending.removeAll()
        committed.removeAll()
        positions.removeAll()
        savepoints.removeAll()
    }

    /// The changes of the transaction just committed; empties the buffer.
    func takeCommitted() -> [Change] {
        defer { committed = [] }
        return committed
    }

    /// Runs `body` without collecting its row changes.
    func withoutCollecting<T>(_ body: () throws -> T) rethrows -> T {
        pauseDepth += 1
        defer { pauseDepth -= 1 }
        return try body()
    }

    /// Called by `Statement.step` once a savepoint statement ran.
    func savepointDidRun(_ statement: SavepointStatement) {
        switch statement.operation {
        case .begin:
            savepoints.append((statement.name, pending.count))
            startSpan()
        case .release:
            if let index = savepoints.lastIndex(where: { Self.sameSavepoint($0.name, statement.name) }) {
                savepoints.removeSubrange(index...)
            }
        case .rollback:
            if let index = savepoints.lastIndex(where: { Self.sameSavepoint($0.name, statement.name) }) {
                // ROLLBACK TO keeps the savepoint itself open.
                truncate(to: savepoints[index].mark)
                savepoints.removeSubrange((index + 1)...)
                startSpan()
            }
        }
    }

    /// Whether two savepoint names are one to SQLite: equal but for the case of ASCII letters
    /// (`sqlite3StrICmp`). Not Foundation's `caseInsensitiveCompare`, which folds all of
    /// Unicode (unlike SQLite) and cost about 2% of the group-commit benchmark's samples.
    private static func sameSavepoint(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8) { x, y in
            (x &- 65 < 26 ? x | 0x20 : x) == (y &- 65 < 26 ? y | 0x20 : y)
        }
    }

    private func startSpan() {
        spanStart = pending.count
        if !positions.isEmpty { positions.removeAll(keepingCapacity: true) }
    }

    // MARK: Hooks (no SQL here)

    private func didCommit() {
        spanStart = 0
        committed = pending
        pending = []
        positions.removeAll()
        savepoints.removeAll()
    }

    private func didRollBack() {
        spanStart = 0
        pending.removeAll()
        positions.removeAll()
        savepoints.removeAll()
    }

    private func authorizedSavepoint(operation: UnsafePointer<CChar>, name: UnsafePointer<CChar>) {
        let kind: SavepointStatement.Operation
        switch String(cString: operation) {
        case "BEGIN": kind = .begin
        case "RELEASE": kind = .release
        case "ROLLBACK": kind = .rollback
        default: return
        }
        preparedSavepoint = SavepointStatement(operation: kind, name: String(cString: name))
    }

    #if !canImport(Darwin)
        private func rowWillChange(
            _ db: OpaquePointer, operation: Int32, database: UnsafePointer<CChar>, table: UnsafePointer<CChar>
        ) {
            guard pauseDepth == 0, strcmp(database, "main") == 0 else { return }
            guard
                let observed = resolvedTables.first(where: {
                    $0.cName.withUnsafeBufferPointer { strcmp($0.baseAddress!, table) == 0 }
                })
            else { return }
            let kind = observed.table.kind
            let holdsRecords = observed.table.holdsRecords
            switch operation {
            case SQLITE_INSERT:
                guard let key = Self.text(db, observed.keyColumn, old: false) else { return }
                record(kind, key, holdsRecords ? .insert : .update, dates: date(db, observed, old: false))
            case SQLITE_DELETE:
                guard let key = Self.text(db, observed.keyColumn, old: true) else { return }
                record(kind, key, holdsRecords ? .delete : .update, dates: date(db, observed, old: true))
            case SQLITE_UPDATE:
                guard let old = Self.text(db, observed.keyColumn, old: true),
                    let new = Self.text(db, observed.keyColumn, old: false)
                else { return }
                let oldDates = date(db, observed, old: true)
                let newDates = date(db, observed, old: false)
                if old == new {
                    record(kind, old, .update, dates: oldDates == newDates ? newDates : oldDates + newDates)
                } else if holdsRecords {
                    // A changed key: the old record is gone, a new one is there.
                    record(kind, old, .delete, dates: oldDates)
                    record(kind, new, .insert, dates: newDates)
                } else {
                    record(kind, old, .update, dates: [])
                    record(kind, new, .update, dates: [])
                }
            default:
                return
            }
        }

        private func date(_ db: OpaquePointer, _ observed: ResolvedTable, old: Bool) -> [CalendarDate] {
            guard let column = observed.dateColumn, let text = Self.text(db, column, old: old),
                let date = CalendarDate(text)
            else { return [] }
            return [date]
        }

        /// A column of the row about to change, as text; nil if NULL.
        private static func text(_ db: OpaquePointer, _ column: Int32, old: Bool) -> String? {
            var value: OpaquePointer?
            let rc = old ? sqlite3_preupdate_old(db, column, &value) : sqlite3_preupdate_new(db, column, &value)
            guard rc == SQLITE_OK, let value, sqlite3_value_type(value) != SQLITE_NULL,
                let text = sqlite3_value_text(value)
            else { return nil }
            let count = Int(sqlite3_value_bytes(value))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }
    #endif

    private func record(_ kind: RecordKind, _ key: String, _ operation: Change.Operation, dates: [CalendarDate]) {
        // Consecutive rows of one record (an order's items) merge without a hash lookup.
        if pending.count > spanStart, let last = pending.last, last.kind == kind, last.key == key {
            pending[pending.count - 1] = Self.merged(last, operation, dates)
            return
        }
        let id = RecordID(kind: kind, key: key)
        if let index = positions[id] {
            pending[index] = Self.merged(pending[index], operation, dates)
        } else {
            positions[id] = pending.count
            pending.append(Change(kind: kind, key: key, operation: operation, dates: dates))
        }
    }

    private static func merged(_ change: Change, _ operation: Change.Operation, _ dates: [CalendarDate]) -> Change {
        let merged: Change.Operation
        switch (change.operation, operation) {
        case (.insert, .delete), (.update, .delete): merged = .delete
        case (.insert, _): merged = .insert
        case (.delete, .insert): merged = .update
        case (.delete, _): merged = .delete
        case (.update, _): merged = .update
        }
        var allDates = change.dates
        for date in dates where !allDates.contains(date) { allDates.append(date) }
        if merged == change.operation, allDates.count == change.dates.count { return change }
        return Change(kind: change.kind, key: change.key, operation: merged, dates: allDates)
    }
}
