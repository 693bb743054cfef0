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
///   The store's own insert of a record (`recordingInsert`, from the tables' `insert` and
///   `insertIfAbsent`) records that change itself instead, with the hook off while it steps,
///   when the insert can change nothing but its own rows;
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
    /// An observed table with its columns' indexes in the current schema. A class: the hook
    /// takes one per row changed, and a reference costs one retain where the struct cost several.
    final class ResolvedTable {
        let table: ObservedKindTable
        /// The table's name as a NUL-terminated C string, compared with `strcmp` in the hook.
        let cName: [CChar]
        let keyColumn: Int32
        let dateColumn: Int32?
        /// Whether the key column is the table's whole primary key and the table is its kind's
        /// only observed one: then a row can be inserted with a key changed earlier in the span
        /// only if that record was deleted since (see `record`). Not so for orders: with
        /// `PRAGMA defer_foreign_keys` an item could be written before its order.
        let keyIsPrimaryKey: Bool
        /// Whether the store's own insert of a record into this table may record its change
        /// itself, with the pre-update hook off while it steps (see `recordingInsert`).
        let takesDirectInserts: Bool

        init(
            table: ObservedKindTable, cName: [CChar], keyColumn: Int32, dateColumn: Int32?, keyIsPrimaryKey: Bool,
            takesDirectInserts: Bool
        ) {
            self.table = table
            self.cName = cName
            self.keyColumn = keyColumn
            self.dateColumn = dateColumn
            self.keyIsPrimaryKey = keyIsPrimaryKey
            self.takesDirectInserts = takesDirectInserts
        }

        /// Whether `name`, as a hook gives it (the table's name as its CREATE TABLE spells
        /// it), names this table. SQLite's names ignore the case of ASCII letters: a table
        /// created as `Notes` for the kind's `notes` went unobserved with `strcmp`.
        func isNamed(_ name: UnsafePointer<CChar>) -> Bool {
            cName.withUnsafeBufferPointer { sqlite3_stricmp($0.baseAddress!, name) == 0 }
        }
    }

    /// A record, its key compared byte for byte as SQLite compares it: Swift's String equality
    /// takes canonically equivalent keys ("\u{E9}" and "e\u{301}") for one, and the second of
    /// two such records changed in one write was not reported.
    private struct RecordID: Hashable {
        let kind: RecordKind
        let key: ExactKey

        init(kind: RecordKind, key: String) {
            self.kind = kind
            self.key = ExactKey(key)
        }
    }

    // `@exclusivity(unchecked)` on the properties the pre-update hook reads or writes per row:
    // it drops the runtime's dynamic exclusivity checks (a begin and an end access per property
    // touched, about 15% of the hook's own time in Benchmarks/Profiles/insert.md). Safe: the
    // collector is used only on the writer's connection, by the one thread stepping it (the hooks
    // run synchronously inside sqlite3_step, the writer's calls between steps), and no method
    // here hands out an inout access that another could overlap: no access is ever concurrent
    // or nested.
    let observedTables: [ObservedKindTable]
    @exclusivity(unchecked) private(set) var resolvedTables: [ResolvedTable] = []
    /// The table the hook last found a row of (see `rowWillChange`).
    @exclusivity(unchecked) private var lastTable: ResolvedTable?
    /// The table a direct insert last went to (see `recordingInsert`).
    @exclusivity(unchecked) private var lastDirectTable: ResolvedTable?
    /// Set by the authorizer when a statement that creates or alters a table or creates a
    /// trigger (temporary ones included) is prepared: direct inserts stop until the columns are
    /// next resolved, which looks at the schema again (see `recordingInsert`).
    @exclusivity(unchecked) private var schemaMayHaveChanged = false
    /// How many inserts recorded their change themselves (see `recordingInsert`): for tests.
    @exclusivity(unchecked) private(set) var directInserts = 0
    /// The connection the hooks are installed on (nil once uninstalled).
    @exclusivity(unchecked) private var handle: OpaquePointer?
    /// Whether the database's text encoding is UTF-8 (told by `PRAGMA encoding` when the
    /// columns are resolved): the hook then reads a key's bytes in place (see `text`).
    @exclusivity(unchecked) private var textIsUTF8 = false
    /// The `PRAGMA schema_version` the columns were resolved at.
    private var resolvedSchemaVersion: Int64?

    /// Changes collected in the open transaction, in order.
    @exclusivity(unchecked) private(set) var pending = ChangeList()
    /// Changes of the last transaction committed, until the writer takes them.
    private var committed = ChangeList()
    /// Where the current span of coalescing changes starts in `pending`.
    @exclusivity(unchecked) private var spanStart = 0
    /// Where in `pending` each record changed since `spanStart` is, for the changes in
    /// `spanStart..<indexedUpTo`: built lazily (`position(of:)`), so a bulk insert hashes no key.
    private var positions: [RecordID: Int] = [:]
    /// Where `positions` stops: changes from here on are not in it yet.
    private var indexedUpTo = 0
    /// The records of the span whose change is (so far) a delete, with their position: all an
    /// insert into a table keyed by its primary key needs to look up (see `record`).
    @exclusivity(unchecked) private var deletions: [RecordID: Int] = [:]
    /// Open savepoints (innermost last), each with the count of `pending` when it began.
    private var savepoints: [(name: String, mark: Int)] = []
    /// Set by the authorizer while a statement is prepared: the savepoint operation it is.
    var preparedSavepoint: SavepointStatement?
    /// While above zero, row changes are not collected (bookkeeping writes, e.g. an image's
    /// access time).
    @exclusivity(unchecked) private var pauseDepth = 0

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
        self.handle = handle
        installPreUpdateHook()
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
    }

    /// The connection's authorizer, forwarded by its `Database` while a statement is prepared.
    func authorize(_ action: Int32, _ third: UnsafePointer<CChar>?, _ fourth: UnsafePointer<CChar>?) {
        if action == SQLITE_SAVEPOINT, let third, let fourth {
            authorizedSavepoint(operation: third, name: fourth)
        } else if Self.changesSchema(action) {
            schemaMayHaveChanged = true
        }
    }

    /// Whether the authorizer's `action` could make a direct insert do more than insert its
    /// rows.
    private static func changesSchema(_ action: Int32) -> Bool {
        switch action {
        case SQLITE_CREATE_TABLE, SQLITE_CREATE_TEMP_TABLE, SQLITE_ALTER_TABLE, SQLITE_DROP_TABLE,
            SQLITE_CREATE_TRIGGER, SQLITE_CREATE_TEMP_TRIGGER:
            true
        default: false
        }
    }

    /// Registers the pre-update hook on the connection the collector is installed on.
    private func installPreUpdateHook() {
        #if !canImport(Darwin)
            guard let handle else { return }
            sqlite3_preupdate_hook(
                handle,
                { context, db, operation, database, table, _, _ in
                    guard let context, let db, let database, let table else { return }
                    Unmanaged<ChangeCollector>.fromOpaque(context).takeUnretainedValue()
                        .rowWillChange(db, operation: operation, database: database, table: table)
                }, Unmanaged.passUnretained(self).toOpaque())
        #endif
    }

    func uninstall(from handle: OpaquePointer) {
        self.handle = nil
        #if !canImport(Darwin)
            sqlite3_preupdate_hook(handle, nil, nil)
        #endif
        sqlite3_commit_hook(handle, nil, nil)
        sqlite3_rollback_hook(handle, nil, nil)
    }

    // MARK: Columns

    /// Resolves the observed tables' column indexes (`PRAGMA table_info`) if the schema changed
    /// since they were last resolved (another process's migration included). The writer calls
    /// it before each batch, inside its transaction. A table that does not exist (yet), or lacks
    /// a column, is not observed. A schema change made inside a write affects only later writes.
    func resolveColumnsIfNeeded(_ database: Database) throws {
        let version = try database.query("PRAGMA schema_version") { $0.int64(0) }.first ?? 0
        if version == resolvedSchemaVersion, !schemaMayHaveChanged { return }
        schemaMayHaveChanged = false
        // A kind's inserts record themselves only if a row inserted is all they change (see
        // `recordingInsert`): no trigger on any of the kind's tables (temporary ones included),
        // and no REPLACE conflict clause in their definitions (which deletes conflicting rows).
        let triggered = Set(
            try database.query(
                """
                SELECT lower(tbl_name) FROM sqlite_master WHERE type = 'trigger'
                UNION SELECT lower(tbl_name) FROM sqlite_temp_master WHERE type = 'trigger'
                UNION SELECT lower(name) FROM sqlite_master WHERE type = 'table' AND sql LIKE '%replace%'
                """
            ) { $0.text(0) })
        let kindsWithSideEffects = Set(
            observedTables.filter { triggered.contains($0.observed.table.lowercased()) }.map(\.kind))
        var resolved: [ResolvedTable] = []
        for table in observedTables {
            let columns = try database.query(
                "SELECT name, pk, type FROM pragma_table_info(?) ORDER BY cid", [.text(table.observed.table)]
            ) { (name: $0.text(0).lowercased(), primaryKey: $0.int(1), type: $0.text(2)) }
            // Column names as SQLite compares them: ASCII letters in any case (`ID` for `id`).
            guard let key = columns.firstIndex(where: { $0.name == table.observed.keyColumn.lowercased() }) else { continue }
            let date = table.observed.dateColumn.flatMap { name in columns.firstIndex { $0.name == name.lowercased() } }
            if table.observed.dateColumn != nil, date == nil { continue }
            let keyIsPrimaryKey =
                columns[key].primaryKey == 1 && columns.filter { $0.primaryKey > 0 }.count == 1
                && observedTables.filter { $0.kind == table.kind }.count == 1
            resolved.append(
                ResolvedTable(
                    table: table, cName: table.observed.table.utf8CString.map { $0 },
                    keyColumn: Int32(key), dateColumn: date.map(Int32.init), keyIsPrimaryKey: keyIsPrimaryKey,
                    takesDirectInserts: table.holdsRecords && !kindsWithSideEffects.contains(table.kind)
                        && Self.keepsTextAsIs(declaredType: columns[key].type)))
        }
        resolvedTables = resolved
        lastTable = nil
        lastDirectTable = nil
        textIsUTF8 = try database.query("PRAGMA encoding") { $0.text(0) }.first == "UTF-8"
        resolvedSchemaVersion = version
    }

    /// Whether a column declared with `type` stores bound text unchanged: TEXT affinity, or
    /// BLOB (none). Affinity follows the declared type's name, "Determination Of Column
    /// Affinity" (https://sqlite.org/datatype3.html): "INT" gives INTEGER; else "CHAR", "CLOB"
    /// or "TEXT" gives TEXT; else "BLOB" or no type gives BLOB; anything else REAL or NUMERIC,
    /// which turn a numeric-looking text (`0012`) into a number (`12`).
    static func keepsTextAsIs(declaredType type: String) -> Bool {
        let type = type.uppercased()
        if type.contains("INT") { return false }
        if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") { return true }
        return type.isEmpty || type.contains("BLOB")
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
        pending.removeLast(from: mark)
        positions = positions.filter { $0.value < mark }
        deletions = deletions.filter { $0.value < mark }
        spanStart = min(spanStart, mark)
        indexedUpTo = min(max(indexedUpTo, spanStart), mark)
    }

    /// Drops everything collected, committed or not (before a batch; after a failed commit).
    func discardAll() {
        spanStart = 0
        pending.removeAll()
        committed.removeAll()
        clearIndex()
        savepoints.removeAll()
    }

    /// The changes of the transaction just committed; empties the buffer.
    func takeCommitted() -> ChangeList {
        defer { committed = ChangeList() }
        return committed
    }

    /// Runs `body` without collecting its row changes.
    func withoutCollecting<T>(_ body: () throws -> T) rethrows -> T {
        pauseDepth += 1
        defer { pauseDepth -= 1 }
        return try body()
    }

    /// Runs `insert`, the store's own insert of one record of `kind` keyed `key` into the kind's
    /// table (and of its parts into theirs), and records that change itself when it returns
    /// true, instead of through the pre-update hook, which is off while `insert` runs.
    ///
    /// Why: the hook costs every row SQLite's unpacking of the new record, our closure, the
    /// lookup of its table and the making of its key, which a bulk insert of 100,000 records
    /// pays 100,000 times (about a tenth of the insert row in `Benchmarks/Profiles/insert.md`);
    /// here the caller already holds the key. The change recorded is the one the hook would
    /// have: `record(kind, key, .insert, dates:)` with the same arguments, so the coalescing
    /// rules are the same; the rows of the kind's parts would have merged into that insert.
    ///
    /// Only when the insert can change nothing but its own rows, else `insert` runs with the
    /// hook as any statement does: the kind's tables have no trigger (temporary ones included;
    /// a schema change prepared since the columns were resolved stops them) and no REPLACE conflict
    /// clause; the key column keeps bound text as it is (so the key recorded is the key
    /// stored); the dates of a table with a date column are given; collection is not paused.
    /// `insert` returns whether the record was inserted; an insert that throws records nothing.
    func recordingInsert(
        of kind: RecordKind, key: String, dates: [CalendarDate]?, _ insert: () throws -> Bool
    ) rethrows -> Bool {
        #if canImport(Darwin)
            return try insert()
        #else
            guard pauseDepth == 0, !schemaMayHaveChanged, let handle, let observed = directTable(of: kind),
                observed.dateColumn == nil || dates != nil
            else { return try insert() }
            sqlite3_preupdate_hook(handle, nil, nil)
            let inserted: Bool
            do {
                defer { installPreUpdateHook() }
                inserted = try insert()
            }
            if inserted {
                record(kind, key, .insert, dates: dates ?? [], newPrimaryKey: observed.keyIsPrimaryKey)
                directInserts += 1
            }
            return inserted
        #endif
    }

    /// The resolved table holding `kind`'s records, if it takes direct inserts.
    private func directTable(of kind: RecordKind) -> ResolvedTable? {
        if let last = lastDirectTable, last.table.kind == kind { return last }
        guard let found = resolvedTables.first(where: { $0.table.kind == kind && $0.table.holdsRecords }),
            found.takesDirectInserts
        else { return nil }
        lastDirectTable = found
        return found
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
        clearIndex()
    }

    private func clearIndex() {
        if !positions.isEmpty { positions.removeAll(keepingCapacity: true) }
        if !deletions.isEmpty { deletions.removeAll(keepingCapacity: true) }
        indexedUpTo = spanStart
    }

    // MARK: Hooks (no SQL here)

    private func didCommit() {
        spanStart = 0
        committed = pending
        pending = ChangeList()
        clearIndex()
        savepoints.removeAll()
    }

    private func didRollBack() {
        spanStart = 0
        pending.removeAll()
        clearIndex()
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
            // A bulk write changes one table row after row: try the last one first.
            let observed: ResolvedTable
            if let last = lastTable, last.isNamed(table) {
                observed = last
            } else {
                guard let found = resolvedTables.first(where: { $0.isNamed(table) }) else { return }
                observed = found
                lastTable = found
            }
            let kind = observed.table.kind
            let holdsRecords = observed.table.holdsRecords
            switch operation {
            case SQLITE_INSERT:
                guard let key = text(db, observed.keyColumn, old: false) else { return }
                record(
                    kind, key, holdsRecords ? .insert : .update, dates: date(db, observed, old: false),
                    newPrimaryKey: holdsRecords && observed.keyIsPrimaryKey)
            case SQLITE_DELETE:
                guard let key = text(db, observed.keyColumn, old: true) else { return }
                record(kind, key, holdsRecords ? .delete : .update, dates: date(db, observed, old: true))
            case SQLITE_UPDATE:
                guard let old = text(db, observed.keyColumn, old: true),
                    let new = text(db, observed.keyColumn, old: false)
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
            guard let column = observed.dateColumn, let text = text(db, column, old: old),
                let date = CalendarDate(text)
            else { return [] }
            return [date]
        }

        /// A column of the row about to change, as text; nil if NULL.
        private func text(_ db: OpaquePointer, _ column: Int32, old: Bool) -> String? {
            var value: OpaquePointer?
            let rc = old ? sqlite3_preupdate_old(db, column, &value) : sqlite3_preupdate_new(db, column, &value)
            guard rc == SQLITE_OK, let value else { return nil }
            let type = sqlite3_value_type(value)
            if type == SQLITE_NULL { return nil }
            if type == SQLITE_TEXT, textIsUTF8 {
                // The bytes in place. The values of a row unpacked for this hook are not
                // NUL-terminated, and sqlite3_value_text terminates one by copying it to a new
                // allocation (sqlite3VdbeMemNulTerminate): a malloc, memcpy and free per row.
                // Read as a blob, text is not converted (the conversion table of
                // https://sqlite.org/c3ref/column_blob.html, which the value_ functions share:
                // TEXT to BLOB, "No change"); in a UTF-8 database the bytes are the UTF-8 text,
                // read by length. `_blob` first: it marks the value a blob, so `_bytes` then
                // returns its length as it is; called first, `_bytes` would make the text (and
                // its copy) itself.
                let bytes = sqlite3_value_blob(value)
                let count = Int(sqlite3_value_bytes(value))
                guard count > 0, let bytes else { return "" }
                return String(
                    decoding: UnsafeRawBufferPointer(start: bytes, count: count).bindMemory(to: UInt8.self), as: UTF8.self)
            }
            guard let text = sqlite3_value_text(value) else { return nil }
            let count = Int(sqlite3_value_bytes(value))
            return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
        }
    #endif

    /// Adds a row's change, merged into the change of its record earlier in the span if there is
    /// one. `newPrimaryKey`: the row is inserted into a table whose primary key is the record's
    /// key. Such a row's record, if changed earlier in the span, was deleted since (its key was
    /// free again), so only `deletions` is looked in: a bulk insert neither hashes its keys nor
    /// grows `positions`, which is built only once another kind of change needs it.
    private func record(
        _ kind: RecordKind, _ key: String, _ operation: Change.Operation, dates: [CalendarDate], newPrimaryKey: Bool = false
    ) {
        // Consecutive rows of one record (an order's items) merge without a hash lookup.
        if pending.count > spanStart, let last = pending.lastOperation(ifOf: kind, key) {
            // An order's items after the order (insert, then updates): the change stays as it
            // is, so nothing is rebuilt. A change was read back and written again per item.
            if dates.isEmpty, Self.merged(last, operation) == last { return }
            update(at: pending.count - 1, Self.merged(pending[pending.count - 1], operation, dates))
            return
        }
        if newPrimaryKey, deletions.isEmpty {
            if dates.isEmpty {
                pending.append(kind, key, operation)
            } else {
                pending.append(Change(kind: kind, key: key, operation: operation, dates: dates))
            }
            return
        }
        let id = RecordID(kind: kind, key: key)
        let index = newPrimaryKey ? deletions[id] : position(of: id)
        if let index {
            update(at: index, Self.merged(pending[index], operation, dates))
        } else {
            if indexedUpTo == pending.count {
                positions[id] = pending.count
                indexedUpTo += 1
            }
            if operation == .delete { deletions[id] = pending.count }
            pending.append(Change(kind: kind, key: key, operation: operation, dates: dates))
        }
    }

    /// Where the change of `id` is in the span, indexing the changes not yet in `positions`.
    private func position(of id: RecordID) -> Int? {
        while indexedUpTo < pending.count {
            let change = pending[indexedUpTo]
            // Each record appears once in a span: the first position is the only one.
            let other = RecordID(kind: change.kind, key: change.key)
            if positions[other] == nil { positions[other] = indexedUpTo }
            indexedUpTo += 1
        }
        return positions[id]
    }

    /// Replaces the change at `index`, keeping `deletions` in step with it.
    private func update(at index: Int, _ change: Change) {
        let before = pending[index].operation
        pending.replace(at: index, with: change)
        if before != .delete, change.operation == .delete {
            deletions[RecordID(kind: change.kind, key: change.key)] = index
        } else if before == .delete, change.operation != .delete {
            deletions[RecordID(kind: change.kind, key: change.key)] = nil
        }
    }

    /// What a record's change becomes when `operation` follows `earlier` in a span.
    private static func merged(_ earlier: Change.Operation, _ operation: Change.Operation) -> Change.Operation {
        switch (earlier, operation) {
        case (.insert, .delete), (.update, .delete): .delete
        case (.insert, _): .insert
        case (.delete, .insert): .update
        case (.delete, _): .delete
        case (.update, _): .update
        }
    }

    private static func merged(_ change: Change, _ operation: Change.Operation, _ dates: [CalendarDate]) -> Change {
        let merged = merged(change.operation, operation)
        var allDates = change.dates
        for date in dates where !allDates.contains(date) { allDates.append(date) }
        if merged == change.operation, allDates.count == change.dates.count { return change }
        return Change(kind: change.kind, key: change.key, operation: merged, dates: allDates)
    }
}

/// A transaction's changes, in order, in about half the memory of `[Change]` (24 bytes a change
/// instead of 48, plus a key's heap text if it has one): a sync of millions of records collects
/// one per record before its commit. An event's one date is kept in its entry, packed into the
/// bytes an entry's alignment leaves free; only a change of two or more dates (a moved event)
/// keeps them aside, by position. (All of them aside, in a dictionary of arrays, cost about 130
/// bytes an event: a sync of 1,000,000 events peaked at 317 MB, frameworks at 93 MB.)
struct ChangeList: RandomAccessCollection, Sendable, Equatable, ExpressibleByArrayLiteral {
    private struct Entry {
        let key: String
        let kind: UInt16
        let operation: Change.Operation
        /// No date (0), the one date packed (`pack`), or `Entry.datesAside`: two or more, in `dates`.
        let date: UInt32

        static let datesAside = UInt32.max

    }

    private var entries: [Entry] = []
    /// Every kind seen, indexed by `Entry.kind` (a handful).
    private var kinds: [RecordKind] = []
    /// The dates of the changes that have two or more, by position.
    private var dates: [Int: [CalendarDate]] = [:]

    init() {}

    init(arrayLiteral changes: Change...) {
        self.init(changes)
    }

    init(_ changes: some Sequence<Change>) {
        for change in changes { append(change) }
    }

    static func == (lhs: ChangeList, rhs: ChangeList) -> Bool { lhs.elementsEqual(rhs) }

    var startIndex: Int { 0 }
    var endIndex: Int { entries.count }

    subscript(position: Int) -> Change {
        let entry = entries[position]
        return Change(
            kind: kinds[Int(entry.kind)], key: entry.key, operation: entry.operation, dates: dates(of: entry, at: position))
    }

    /// Calls `body` with each change in order, read in place (no `Change` is made): its kind's
    /// position among the kinds seen (equal positions, equal kinds), kind, key, operation and
    /// dates. For the change log's encoder, which visits every change of a transaction.
    func forEachChange(
        _ body: (
            _ kindPosition: UInt16, _ kind: RecordKind, _ key: String, _ operation: Change.Operation, _ dates: [CalendarDate]
        )
            -> Void
    ) {
        for (position, entry) in entries.enumerated() {
            body(entry.kind, kinds[Int(entry.kind)], entry.key, entry.operation, dates(of: entry, at: position))
        }
    }

    /// The last change's operation if it is of this record (compared in place: no `Change` is
    /// made); nil if it is another record's, or there is none.
    func lastOperation(ifOf kind: RecordKind, _ key: String) -> Change.Operation? {
        // Byte for byte, as SQLite compares keys (see `RecordID`); String's `==` first, which is
        // false for most pairs at once (a small ASCII key is compared inline) and never false for
        // equal bytes.
        guard let last = entries.last, last.key == key, FeedFields.sameBytes(last.key, key), kinds[Int(last.kind)] == kind
        else { return nil }
        return last.operation
    }

    mutating func append(_ change: Change) {
        entries.append(entry(change, at: entries.count))
    }

    /// Appends a change without dates: a bulk insert's, made in place (no `Change`, no dates
    /// to look at).
    mutating func append(_ kind: RecordKind, _ key: String, _ operation: Change.Operation) {
        if !dates.isEmpty { dates[entries.count] = nil }
        entries.append(Entry(key: key, kind: UInt16(index(of: kind)), operation: operation, date: 0))
    }

    mutating func replace(at position: Int, with change: Change) {
        entries[position] = entry(change, at: position)
    }

    /// Drops every change.
    mutating func removeAll() { self = ChangeList() }

    /// Drops the changes from `position` on.
    mutating func removeLast(from position: Int) {
        guard position < entries.count else { return }
        entries.removeSubrange(position...)
        if !dates.isEmpty { dates = dates.filter { $0.key < position } }
    }

    /// The index of `kind` in `kinds`, added if new.
    private mutating func index(of kind: RecordKind) -> Int {
        if let last = entries.last, kinds[Int(last.kind)] == kind {
            return Int(last.kind) // a bulk write: the same kind as the last change
        } else if let index = kinds.firstIndex(of: kind) {
            return index
        }
        kinds.append(kind)
        return kinds.count - 1
    }

    private mutating func entry(_ change: Change, at position: Int) -> Entry {
        let kind = index(of: change.kind)
        var date: UInt32 = 0
        if change.dates.count == 1 {
            date = Self.pack(change.dates[0])
        } else if !change.dates.isEmpty {
            date = Entry.datesAside
        }
        if date == Entry.datesAside {
            dates[position] = change.dates
        } else if !dates.isEmpty {
            dates[position] = nil
        }
        return Entry(key: change.key, kind: UInt16(kind), operation: change.operation, date: date)
    }

    private func dates(of entry: Entry, at position: Int) -> [CalendarDate] {
        switch entry.date {
        case 0: []
        case Entry.datesAside: dates[position] ?? []
        default: Self.unpack(entry.date).map { [$0] } ?? []
        }
    }

    /// A date in 23 bits, never 0 (days start at 1) nor `Entry.datesAside`: year (1 to 9999, 14
    /// bits), month (4), day (5).
    private static func pack(_ date: CalendarDate) -> UInt32 {
        UInt32(truncatingIfNeeded: date.year) << 9 | UInt32(truncatingIfNeeded: date.month) << 5
            | UInt32(truncatingIfNeeded: date.day)
    }

    private static func unpack(_ packed: UInt32) -> CalendarDate? {
        CalendarDate(year: Int(packed >> 9), month: Int(packed >> 5 & 0xF), day: Int(packed & 0x1F))
    }
}
