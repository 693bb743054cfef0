import GRDBSQLite

/// Closes a raw connection.
func GRDBSQLiteClose(_ db: OpaquePointer) -> Int32 { sqlite3_close_v2(db) }

/// The linked SQLite's version.
func sqliteVersion() -> String { String(cString: sqlite3_libversion()) }
