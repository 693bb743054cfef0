import Foundation
import GRDBSQLite
import Store

/// The baseline: SQLite's C API used directly, as well as it can be from Swift.
enum RawSQLite {
    /// The same table as Migrations/0001_create_frameworks.sql.
    static let schema = """
        CREATE TABLE IF NOT EXISTS frameworks (
            id          TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 200),
            name        TEXT NOT NULL,
            image_name  TEXT NOT NULL,
            url_string  TEXT NOT NULL,
            description TEXT NOT NULL
        );
        """

    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// The store's schema for orders and events (Migrations/0002 and 0003), for the CLI import.
    static let ordersAndEventsSchema = """
        CREATE TABLE IF NOT EXISTS orders (
            id        TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 200),
            placed_at INTEGER NOT NULL
        );
        CREATE TABLE IF NOT EXISTS order_items (
            order_id    TEXT NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
            position    INTEGER NOT NULL CHECK (position >= 0),
            item_name   TEXT NOT NULL,
            price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
            aisle       INTEGER NOT NULL CHECK (aisle >= 0),
            quantity    INTEGER NOT NULL DEFAULT 1 CHECK (quantity >= 1),
            PRIMARY KEY (order_id, position)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS events (
            id    TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 200),
            title TEXT NOT NULL,
            date  TEXT NOT NULL CHECK (date IS date(date, '+0 days')),
            notes TEXT
        );
        CREATE INDEX IF NOT EXISTS events_by_date ON events (date, id);
        """

    /// The store's default durability as SQLite's `synchronous` (FULL under `.full`): every
    /// baseline (raw C, the sqlite3 CLI, GRDB) runs with it, so each comparison is like for like.
    static let storeSynchronous: String =
        switch Store.Configuration().durability {
        case .normal: "NORMAL"
        case .full: "FULL"
        }

    /// Opens a connection with the settings of the store under its default durability: WAL,
    /// synchronous as `storeSynchronous`.
    static func open(_ path: String) throws -> OpaquePointer {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
            let db
        else { throw BenchmarkError("cannot open \(path)") }
        try exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = \(storeSynchronous); PRAGMA foreign_keys = ON;" + schema)
        return db
    }

    static func exec(_ db: OpaquePointer, _ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchmarkError("\(String(cString: sqlite3_errmsg(db))) in \(sql)")
        }
    }

    private static func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            _ = buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                sqlite3_bind_text(statement, index, $0, Int32(buffer.count), transient)
            }
        }
    }

    /// One prepared INSERT, one transaction.
    static func insert(_ frameworks: [Framework], into db: OpaquePointer, transactionPerRow: Bool = false) throws {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(
            db, "INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES (?, ?, ?, ?, ?)", -1, &statement,
            nil)
        defer { sqlite3_finalize(statement) }
        if !transactionPerRow { try exec(db, "BEGIN IMMEDIATE") }
        for framework in frameworks {
            if transactionPerRow { try exec(db, "BEGIN IMMEDIATE") }
            bind(statement!, 1, framework.id)
            bind(statement!, 2, framework.name)
            bind(statement!, 3, framework.imageName)
            bind(statement!, 4, framework.urlString)
            bind(statement!, 5, framework.description)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkError(String(cString: sqlite3_errmsg(db))) }
            sqlite3_reset(statement)
            if transactionPerRow { try exec(db, "COMMIT") }
        }
        if !transactionPerRow { try exec(db, "COMMIT") }
    }

    private static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        let pointer = sqlite3_column_text(statement, column)!
        return String(
            decoding: UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    /// Every row into structs, in a read transaction.
    static func fetchAll(_ db: OpaquePointer) throws -> [Framework] {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(
            db, "SELECT id, name, image_name, url_string, description FROM frameworks ORDER BY id", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        try exec(db, "BEGIN")
        var frameworks: [Framework] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            frameworks.append(
                Framework(
                    id: text(statement!, 0), name: text(statement!, 1), imageName: text(statement!, 2),
                    urlString: text(statement!, 3), description: text(statement!, 4)))
        }
        try exec(db, "COMMIT")
        return frameworks
    }
}
