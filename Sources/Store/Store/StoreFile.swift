import Foundation

/// What makes a SQLite file a store, checked before anything is written to it.
///
/// A store carries `PRAGMA application_id` = `StoreFile.applicationID` ("STOR"). Stores made
/// before it was set have application_id 0 and our `schema_migrations` table; they get the id
/// the next time they are migrated. Any other file is refused unchanged: one with another
/// application_id, one with tables but no `schema_migrations` of ours (a Rails-style table with
/// only `version` is not ours), one that is not a SQLite database. An empty file (0 bytes, or a
/// database without tables) is a new store.
enum StoreFile {
    /// `PRAGMA application_id` of every store: the bytes "STOR" (0x53544F52), written at offset
    /// 68 of the file header (https://sqlite.org/fileformat2.html#application_id).
    static let applicationID: Int32 = 0x5354_4F52

    /// Refuses a folder where the database file belongs, before SQLite says "unable to open".
    static func checkNotAFolder(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw StoreError.cannotOpen(path: path, reason: "it is a folder, not a database file")
        }
    }

    /// Refuses a name too long for the files SQLite names after it (`NAME-journal`, 8 bytes more,
    /// the longest; `NAME-wal`, `NAME-shm`), before anything is created: SQLite failed with
    /// "unable to open database file (File name too long)" once the store's file was created,
    /// and a failed command could not remove it either (its removal needs the journal too): a
    /// 0-byte file was left.
    ///
    /// The name looked at is the one SQLite names them after: that of the file a symbolic link
    /// to the store names (`realFile`). A link with a long name to a store with a short one
    /// was refused, though SQLite opens it.
    ///
    /// A store that exists already (renamed to a long name, say) needs only its -wal and -shm (4
    /// bytes more): it is in WAL mode, and only a store being created goes through a -journal
    /// (its first transaction, before WAL mode is set) or a failed command's removal of it. A
    /// file that is there but not in WAL mode (an empty file, which a command that adds makes a
    /// store) still goes through the -journal: SQLite failed at `PRAGMA journal_mode = WAL`.
    static func checkCompanionNamesFit(_ path: String) throws {
        let real = realFile(path)
        let name = PathName.lastComponent(of: real)
        let limit = pathconf(PathName.folder(of: real), Int32(_PC_NAME_MAX))
        let maximum = limit > 0 ? limit : 255
        // The header is read only for a name with no room for the -journal, the rare case.
        guard name.utf8.count + "-journal".utf8.count > maximum else { return }
        let inWALMode = isInWALMode(real)
        let longest = (inWALMode ? "-wal" : "-journal").utf8.count
        guard name.utf8.count + longest > maximum else { return }
        let whose = real == path ? "its name" : "the name of the file it names, \(real),"
        let companions = inWALMode ? "\(name)-wal and -shm" : "\(name)-journal, -wal and -shm"
        throw StoreError.cannotOpen(
            path: path,
            reason:
                "\(whose) is \(name.utf8.count) bytes long: SQLite makes \(companions) beside it, and a name on this file system has at most \(maximum) bytes, so a store's at most \(maximum - longest)"
        )
    }

    /// Whether the file at `path` is a SQLite database in WAL mode: its header's write and read
    /// versions (bytes 18 and 19) are 2 (https://sqlite.org/fileformat2.html#file_format_version_numbers).
    private static func isInWALMode(_ path: String) -> Bool {
        guard let header = header(of: path, count: 20), header.bytes.count == 20 else { return false }
        return header.bytes[18] == 2 && header.bytes[19] == 2
    }

    /// Refuses a store SQLite could not open, naming why, before SQLite says "unable to open
    /// database file" (error 14) at its first statement: a store is in WAL mode, and "a WAL-mode
    /// database on read-only media, or a WAL-mode database that lacks write permission, can still
    /// be read as long as one or more of the following conditions are met: the -shm and -wal
    /// files already exists and are readable; there is write permission on the directory
    /// containing the database so that the -shm and -wal files can be created; ..."
    /// (https://sqlite.org/wal.html, Read-Only Databases). A read-only store file in a writable
    /// folder is fine: it is read, and writes fail saying the database is read-only.
    ///
    /// Looked at where SQLite puts them: beside the file a symbolic link to the store names,
    /// after that file's name (its unix VFS resolves the link). Looked at beside the link, a
    /// link in a writable folder to a store in a read-only one passed, and SQLite failed with
    /// "unable to open database file"; a link in a read-only folder to a store in a writable
    /// one was refused, though SQLite would have opened it.
    static func checkWALFilesCanExist(_ path: String) throws {
        let real = realFile(path)
        if access(real + "-wal", F_OK) == 0, access(real + "-shm", F_OK) == 0 { return }
        let folder = PathName.folder(of: real)
        guard access(folder, W_OK | X_OK) != 0 else { return }
        let code = errno
        // EPERM: an immutable folder (chattr +i).
        guard code == EACCES || code == EPERM || code == EROFS else { return } // SQLite will say why
        let name = PathName.lastComponent(of: real)
        // Through a link: the file it names, whose folder SQLite writes in.
        var status = stat()
        let isLink = lstat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
        let place =
            !isLink
            // Its folder as the path spells it: resolved, a relative path's `.` or a linked
            // folder (macOS's /var, /tmp) was named as a path the user never typed.
            ? (code == EROFS
                ? "it is on a read-only file system" : "its folder \(PathName.folder(of: path)) is not writable")
            : (code == EROFS
                ? "the file it names, \(real), is on a read-only file system"
                : "the folder of the file it names, \(folder), is not writable")
        throw StoreError.cannotOpen(
            path: path, reason: "\(place), and SQLite must create \(name)-wal and \(name)-shm beside the store to open it")
    }

    /// The file `path` names once symbolic links are followed, as SQLite names it (its unix VFS
    /// resolves a link to the database, and names the `-wal` and `-shm` after the target);
    /// `path` itself if it cannot be resolved.
    static func realFile(_ path: String) -> String { PathName.resolved(path) ?? path }

    /// Throws `StoreError.storeMoved` if one of the store's files is no longer the one it
    /// opened (see `WALFiles`): a sync into a store deleted or replaced under it (rm, a restore)
    /// went to the unlinked file and reported "applied", and its -wal then corrupted the next
    /// file put there; a sync whose -wal or -shm was deleted committed where no other process
    /// would see it.
    static func checkStill(_ files: WALFiles?) throws {
        if let replaced = files?.replacedFile() { throw StoreError.storeMoved(path: replaced) }
    }

    /// Why `path` cannot be opened or created, from the system's error `code`, in words about
    /// the path: the system's "No such file or directory", "Is a directory" and "Not a
    /// directory" did not say which part of it was wrong.
    static func cannotOpen(_ path: String, code: Int32) -> StoreError {
        if path.hasSuffix("/") {
            return .cannotOpen(path: path, reason: "the path ends with '/': a store is a file, not a folder")
        }
        let folder = PathName.folder(of: path)
        var status = stat()
        if code == ENOENT, stat(folder, &status) != 0 {
            return .cannotOpen(path: path, reason: "its folder \(folder) does not exist")
        }
        if code == ENOTDIR {
            return .cannotOpen(path: path, reason: "a part of it before the last is a file, not a folder")
        }
        return .cannotOpen(path: path, reason: String(cString: strerror(code)))
    }

    /// Refuses a file that is neither empty nor a SQLite database by its first 16 bytes. SQLite
    /// itself takes a file shorter than a page for an empty database and would write a store
    /// over it (a 1-byte file became a 94 KB store).
    ///
    /// Anything but a regular file (a FIFO, a device, a socket) is refused before it is read:
    /// opening a FIFO for reading waited for a writer forever, and no signal could end it.
    ///
    /// Its descriptor is closed through `OpenDatabaseFiles.close(_:)`: if another store of this
    /// process has the file open, closing it would drop that store's connections' `fcntl` locks
    /// (they belong to the process), among them the SHARED lock that keeps another process's
    /// last close from checkpointing and deleting the `-wal` and `-shm` under it. The descriptor
    /// is parked then, and closed with the last store on the file, as SQLite's unix VFS does for
    /// its own. (Not skipping the read for a file another store has open: whether one has is
    /// known only by the identity of the file opened, and a store may open it between that look
    /// and the close; parking decides with the registry locked.)
    static func checkHeader(_ path: String) throws {
        guard let header = header(of: path, count: 16) else { return } // SQLite will say why
        if !header.isRegular {
            throw StoreError.cannotOpen(path: path, reason: "it is not a regular file (a FIFO, a device or a socket)")
        }
        if !header.bytes.isEmpty, header.bytes != Array("SQLite format 3\0".utf8) {
            throw StoreError.notAStore(path: path, reason: "it is not a SQLite database")
        }
    }

    /// The first `count` bytes of the file at `path` (fewer if it is shorter), nil if it cannot
    /// be opened; nothing is read of anything but a regular file (`isRegular` false). Opened
    /// without blocking (a FIFO's open waited for a writer forever). A descriptor parked on this
    /// very file (another store of this process has it open) is read again rather than a new one
    /// opened and parked too: a store opened and closed over and over beside a long-lived one
    /// would otherwise park one descriptor per open. And it is closed through
    /// `OpenDatabaseFiles`: closing a descriptor of a file another store of this process has
    /// open drops that store's locks.
    private static func header(of path: String, count: Int) -> (bytes: [UInt8], isRegular: Bool)? {
        let descriptor = OpenDatabaseFiles.borrowParked(path: path) ?? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { OpenDatabaseFiles.close(descriptor) }
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & S_IFMT != S_IFREG { return ([], false) }
        var bytes = [UInt8](repeating: 0, count: count)
        var read = 0
        while read < count {
            let result = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + read, $0.count - read, off_t(read)) }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { break }
            read += result
        }
        return (Array(bytes[..<read]), true)
    }

    /// Throws `StoreError.notAStore` unless `database` is a store, a store of an earlier
    /// version, or empty. Only reads (no transaction is left open, the journal mode is not
    /// touched), so a refused file stays byte-identical.
    static func check(_ database: Database) throws {
        let id: Int64
        let tables: [String]
        do {
            id = try database.fetchOne("PRAGMA application_id")?[0].integerValue ?? 0
            tables = try database.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ) { $0.text(0) }
        } catch let error as SQLiteError where error.code == SQLiteError.notADatabase {
            throw StoreError.notAStore(path: database.path, reason: "it is not a SQLite database")
        }
        if id == Int64(applicationID) {
            // A store with tables but no record of its migrations was damaged or edited by hand:
            // migrating it again would fail on its own tables, after writing the record's table.
            if !tables.isEmpty, !tables.contains(Migrator.table) {
                throw StoreError.notAStore(
                    path: database.path,
                    reason:
                        "it is a store whose \(Migrator.table) table is missing (damaged, or edited by hand); restore it from a backup"
                )
            }
            return
        }
        if id != 0 {
            throw StoreError.notAStore(
                path: database.path,
                reason: "its application_id is \(id), another application's (a store's is \(applicationID))")
        }
        guard !tables.isEmpty else { return }
        let columns =
            tables.contains(Migrator.table)
            ? Set(try database.query("SELECT name FROM pragma_table_info('\(Migrator.table)')") { $0.text(0) })
            : []
        guard columns.isSuperset(of: ["version", "name", "checksum", "applied_at"]) else {
            let shown = tables.sorted().prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", ..." : "")
            throw StoreError.notAStore(
                path: database.path, reason: "it holds another application's tables (\(shown)) and no store migrations")
        }
    }

    /// Whether `database` carries a store's application_id (a store is claimed at its first
    /// migration), or has no application_id and no table, index, view or trigger at all.
    /// Only reads; false for a file SQLite cannot read.
    private static func isStoreOrBlank(_ database: Database) -> Bool {
        guard let id = (try? database.fetchOne("PRAGMA application_id"))??[0].integerValue else { return false }
        if id == Int64(applicationID) { return true }
        guard id == 0, let count = (try? database.fetchOne("SELECT count(*) FROM sqlite_master"))??[0].integerValue else {
            return false
        }
        return count == 0
    }

    /// Sets our application_id on a store that has none yet (new, or made by an earlier version).
    static func claim(_ database: Database) throws {
        if try database.fetchOne("PRAGMA application_id")?[0].integerValue == Int64(applicationID) { return }
        try database.executeScript("PRAGMA application_id = \(applicationID)")
    }

    /// Removes the store at `path` (and its -wal, -shm and -journal files) if nothing but its
    /// migrations has written to it and no other connection has it open; true if it did.
    ///
    /// For a command that created a store and then failed: another process may have opened
    /// the new file meanwhile and written to it (two `orders add` at once, one failing), and
    /// removing it then lost a write that process had confirmed. So: the connection leaves WAL
    /// mode first, which SQLite allows only to the sole connection ("the journal mode cannot be
    /// changed while other connections have the database open in WAL mode"), then holds an
    /// exclusive lock while it checks that every table but the migrations' records and the sync
    /// history is empty, and unlinks the files. Anything else, and the store stays as it is (back in WAL mode).
    ///
    /// Only the file the command created (`created`, its device and inode) is looked at: the
    /// command ran on after creating the file (a sync waits on its feed), and the path may name
    /// another file by now, renamed over it meanwhile. Another application's database was
    /// switched to WAL mode, and deleted if its tables were empty; another store holding only
    /// bookkeeping (a fresh one, a failed sync's) was deleted. Looked at before the file is
    /// opened, and again, under the exclusive lock, just before the unlinks. (What is renamed
    /// over the path between that last look and the unlink cannot be told apart: the system
    /// has no unlink of a file by its descriptor.) And only a store, or a database without a
    /// table (a creation that failed before its first migration), is removed.
    static func removeUntouched(at path: String, created: FileIdentity) -> Bool {
        guard FileIdentity(of: path) == created else { return false }
        guard
            let database = try? Database(
                path: path, options: Database.OpenOptions(readOnly: false, create: false, busyTimeout: .zero))
        else { return false }
        defer { database.close() }
        // The file the connection opened, should the path have been renamed over just before.
        guard FileIdentity(of: path) == created, isStoreOrBlank(database) else { return false }
        guard (try? database.fetchOne("PRAGMA journal_mode = DELETE"))??[0].textValue == "delete" else { return false }
        var removed = false
        do {
            try database.execute("BEGIN EXCLUSIVE")
            let tables = try database.query(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            ) { $0.text(0) }
            var untouched = true
            // What the migrations write (the image cache's totals among it), and the history a
            // failed sync leaves (it says only that the sync failed): nothing a command was told
            // it saved.
            let bookkeeping: Set<String> = [Migrator.table, "store_identity", "sync_history", "image_cache_totals"]
            for table in tables where !bookkeeping.contains(table) {
                let quoted = "\"" + table.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                if try database.fetchOne("SELECT 1 FROM \(quoted) LIMIT 1") != nil {
                    untouched = false
                    break
                }
            }
            if untouched, FileIdentity(of: path) == created {
                for suffix in ["-wal", "-shm", "-journal", ""] { unlink(path + suffix) }
                removed = true
            }
            try database.execute("ROLLBACK")
        } catch {
            database.rollbackIfNeeded()
        }
        if !removed { _ = try? database.fetchOne("PRAGMA journal_mode = WAL") }
        return removed
    }
}
