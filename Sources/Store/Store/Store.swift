import Foundation

/// A store: one SQLite database file holding frameworks, orders, events and cached images.
///
/// ```swift
/// let store = try await Store.open(at: "/path/to/store.sqlite")
/// try await store.frameworks.insert(Framework(id: "arkit", name: "ARKit", ...))
/// let all = try await store.frameworks.fetchAll()
/// ```
///
/// Guarantees:
/// - one writer (`DatabaseWriter`, on a serial queue of its own) serializes every write; each
///   write is a transaction, committed or rolled back and rethrown;
/// - reads run concurrently on their own connections and never wait for a write in progress
///   (WAL); each read sees one committed snapshot;
/// - opening applies pending migrations, and refuses a database whose migrations were modified
///   or that comes from a newer build;
/// - no blocking SQLite call runs on Swift's cooperative thread pool.
public final class Store: Sendable {
    /// The database file, or nil for an in-memory store.
    public let path: String?
    /// The options the store was opened with; fixed for its lifetime.
    public let configuration: Configuration
    let writer: DatabaseWriter
    /// Nil in memory, where reads go through the writer's connection.
    let readers: ReaderPool?
    /// Shares one fetch among concurrent syncs of one source.
    let fetchCoalescer = FetchCoalescer()
    /// Shares one download among concurrent loads of one image URL.
    let imagePipeline: ImagePipeline
    /// Tells observers of committed transactions, from this process and others.
    let changeMonitor: ChangeMonitor
    /// The store's files (database, -wal, -shm) as it opened them (nil in memory): a sync
    /// commits nothing if one was replaced, no connection checkpoints as it closes if the -wal
    /// or -shm was, and the close removes the old file's -wal and -shm if the database was.
    let walFiles: WALFiles?
    /// The store's entry in the process's registry of open database files (nil in memory):
    /// released once its connections are closed (see `OpenDatabaseFiles`).
    let openFile: OpenDatabaseFiles?

    /// The first of the store's files (database, -wal, -shm) that was removed or replaced since
    /// it opened (looked at now), or nil; nil in memory. For a long-running reader of the store
    /// (`storectl watch`), which no write or sync would warn.
    package var replacedFile: String? { walFiles?.replacedFile() }

    /// Options fixed when a store is opened.
    public struct Configuration: Sendable {
        /// The image cache's default byte budget: 512 MiB.
        public static let defaultImageCacheBudget = 512 * 1024 * 1024

        /// How long a write waits for another process's write transaction before failing with
        /// `StoreError.writeLockTimeout`. 60 s outlasts a large sync in another process (a
        /// 1,000,000-record, 292 MB feed commits in a few seconds here, so 10x margin on a slower
        /// disk or a loaded machine), yet a stuck writer still ends in an error, not a hang.
        public var busyTimeout: Duration = .seconds(60)
        /// The most read connections open at once.
        public var maximumReaders = 4
        /// The image cache's byte budget (default 512 MiB); beyond it, least recently used
        /// entries are evicted.
        public var imageCacheBudget = Configuration.defaultImageCacheBudget
        /// Create the file (and the store in it) when it does not exist (default). When false,
        /// opening a missing file throws `StoreError.storeNotFound` and creates nothing: for
        /// commands that only read.
        public var createIfMissing = true
        /// Apply pending migrations when opening (default), refusing a database with modified or
        /// unknown migrations. When false, the database is opened as it is: `migrationStatus()`
        /// reports, `migrate()` verifies and applies.
        public var migrateOnOpen = true
        /// The time source.
        public var clock: StoreClock = .live
        /// The migrations this store applies: the embedded `Migrations/*.sql` by default.
        public var migrations: [Migration] = Migration.embedded
        /// An app's own record kinds, beside the built-in ones: synced, validated, exported,
        /// counted and observed like them. Their tables come from `appMigrations`. Opening
        /// throws ``StoreError/invalidConfiguration(reason:)`` for a kind registered twice, two
        /// kinds on one table, a name of the store's own, or a name SQLite cannot read unquoted.
        public var recordTypes: [any StoreRecord.Type] = []
        /// An app's own migrations, applied after the library's, recorded under the app's
        /// namespace, checksummed and refused on edit the same way. Opening throws
        /// ``StoreError/invalidConfiguration(reason:)`` for two with one version.
        public var appMigrations: AppMigrations? = nil
        /// How sync and image loads reach the network: URLSession by default.
        public var transport: HTTPTransport = .live
        /// Retries of failed HTTP requests (backoff with jitter, Retry-After honoured).
        public var retryPolicy = RetryPolicy()
        /// How often observers look for changes committed by other processes on the same file:
        /// from 1 ms to a year (a shorter or longer interval is taken as the nearest).
        public var observationPollInterval: Duration = .milliseconds(100)
        /// The jitter source for retry backoff, in 0..<1.
        public var random: @Sendable () -> Double = { Double.random(in: 0..<1) }
        /// The most writes committed together in one transaction (group commit): writes that
        /// arrive while another is being written wait for it, then up to this many run in one
        /// transaction, each in its own savepoint, so one failing write still rolls back only
        /// itself, and each caller is answered once the transaction holding its write has
        /// committed. Batching saves a commit per write; the limit bounds how long one
        /// transaction holds the write lock. 1 turns group commit off: one transaction per
        /// write. Default 1,000.
        public var maximumWritesPerTransaction = 1_000
        /// What a committed write survives (see `Durability`). Default `.full`: a write
        /// acknowledged to its caller survives a power cut, as with SQLite's and GRDB's defaults;
        /// group commit shares each commit's sync among the writes waiting for it.
        public var durability: Durability = .full
        /// For tests only (not public): the SQLite VFS every connection opens through (nil: the
        /// default), so the power-loss tests can open a store through their simulated-crash VFS.
        var vfsName: String? = nil
        /// For tests only (not public): SQL the writer's connection runs once when it opens,
        /// outside any transaction, after the durability is applied and before migrations (the
        /// power-loss tests' synchronous=OFF variant sets it).
        var writerSetupSQL: [String] = []
        /// For storectl (not public): the store is read and written through its writer's
        /// connection alone, in SQLite's exclusive locking mode, without a `-shm`. "If the
        /// locking mode is EXCLUSIVE prior to the first WAL-mode database access, then SQLite
        /// never attempts to call any of the shared-memory methods and hence no shared-memory
        /// wal-index is ever created" (https://sqlite.org/wal.html#noshm): the WAL index lives in
        /// the heap. So a store whose `-shm` cannot be made, on a full disk, can still be read
        /// (and exported elsewhere). Other processes that open the file wait until it closes.
        package var exclusiveLocking = false
        /// For tests only (not public): runs on the opening thread once the writer has opened
        /// and migrated the file (its -wal and -shm open too), before the store takes their
        /// identities: a test closes another store on the path meanwhile.
        var willFinishOpening: (@Sendable () -> Void)? = nil

        /// The defaults documented on each property.
        public init() {}
    }

    /// What a committed write survives. Set on the writer connection (the only one that commits).
    ///
    /// SQLite (https://sqlite.org/pragma.html#pragma_synchronous): "FULL (2) - When synchronous
    /// is FULL (2), the SQLite database engine will use the xSync method of the VFS to ensure
    /// that all content is safely written to the disk surface prior to continuing. [...] WAL mode
    /// is always consistent with synchronous=NORMAL, but WAL mode does lose durability. A
    /// transaction committed in WAL mode with synchronous=NORMAL might roll back following a
    /// power loss or system crash. Transactions are durable across application crashes
    /// regardless of the synchronous setting or journal mode." And https://sqlite.org/wal.html:
    /// "Writers sync the WAL on every transaction commit if PRAGMA synchronous is set to FULL but
    /// omit this sync if PRAGMA synchronous is set to NORMAL."
    ///
    /// | | application crash | OS crash or power cut |
    /// |---|---|---|
    /// | `.normal` | nothing committed is lost | the last transactions committed since the last checkpoint may roll back (the store stays consistent: whole transactions, in order) |
    /// | `.full` | nothing committed is lost | nothing acknowledged is lost (if the drive honours fsync; on Apple platforms F_FULLFSYNC) |
    public enum Durability: String, Sendable, CaseIterable {
        /// WAL with `synchronous = NORMAL`: a commit writes the WAL without syncing it; the WAL is
        /// synced at checkpoints. Fastest; survives an application crash, not a power cut.
        case normal
        /// WAL with `synchronous = FULL` (on Apple platforms also `fullfsync` and
        /// `checkpoint_fullfsync`, since a plain fsync there does not flush the drive's cache):
        /// every commit syncs the WAL before it returns, so a caller is answered only once its
        /// write is on stable storage.
        case full
    }

    private init(
        path: String?, configuration: Configuration, writer: DatabaseWriter, readers: ReaderPool?, changeMonitor: ChangeMonitor,
        walFiles: WALFiles?, openFile: OpenDatabaseFiles?
    ) {
        self.path = path
        self.configuration = configuration
        self.writer = writer
        self.readers = readers
        self.changeMonitor = changeMonitor
        self.walFiles = walFiles
        self.openFile = openFile
        self.imagePipeline = ImagePipeline(
            cache: Self.imageCacheAccess(writer: writer, readers: readers, configuration: configuration))
        changeMonitor.attach(Self.changeLogAccess(writer: writer, readers: readers))
    }

    /// Opens (creating if needed, with mode 0600) the store at `path` and migrates it.
    ///
    /// Opening runs off Swift's cooperative pool. With ``Configuration/migrateOnOpen`` (the
    /// default) the pending migrations are applied, in one transaction, each in its own savepoint; two processes
    /// opening one new file at once both succeed (one migrates, the other finds nothing to do).
    ///
    /// - Throws: ``StoreError/notAStore(path:reason:)`` for a file that is not a store (another
    ///   application's SQLite database, or not SQLite at all), left byte-identical;
    ///   ``StoreError/storeNotFound(path:)`` for a missing file when
    ///   ``Configuration/createIfMissing`` is false; ``StoreError/cannotOpen(path:reason:)`` when
    ///   the file cannot be created or opened; ``StoreError/migrationModified(migration:recorded:expected:)``
    ///   or ``StoreError/databaseFromFuture(unknownMigrations:)`` for a database this build must
    ///   not touch (changing nothing); ``StoreError/migrationFailed(migration:underlying:)`` when a
    ///   migration's SQL fails (the database stays at the previous version);
    ///   ``StoreError/invalidConfiguration(reason:)`` for record types or app migrations that
    ///   cannot work (checked before the file is touched).
    public static func open(at path: String, configuration: Configuration = .init()) async throws -> Store {
        try await openReportingCreation(at: path, configuration: configuration).store
    }

    /// Removes a store a failed command created, if the path still names the file it created
    /// (`created`, from `openReportingCreation`) and nothing else has written to it or has it
    /// open (see `StoreFile.removeUntouched(at:created:)`); true if it did.
    package static func removeUntouched(at path: String, created: FileIdentity) -> Bool {
        StoreFile.removeUntouched(at: path, created: created)
    }

    /// `open(at:configuration:)`, and the identity of the file if this call created it (an
    /// exclusive create: of two processes opening one new path at once, exactly one did), nil
    /// if it did not. For storectl, which removes a store its failed command created
    /// (`StoreFile.removeUntouched(at:created:)`): only that file, not another renamed over
    /// the path meanwhile.
    package static func openReportingCreation(
        at path: String, configuration: Configuration = .init()
    ) async throws -> (store: Store, created: FileIdentity?) {
        try await onBlockingQueue {
            try Self.check(configuration)
            // Before any descriptor of the file is opened: see `OpenDatabaseFiles`.
            let openFile = OpenDatabaseFiles(opening: path)
            do {
                let store = try openRegistered(at: path, configuration: configuration, openFile: openFile)
                openFile.opened()
                return store
            } catch {
                openFile.release()
                throw error
            }
        }
    }

    /// `openReportingCreation(at:configuration:)` on the blocking queue, once the path is
    /// registered as being opened (`openFile`).
    private static func openRegistered(
        at path: String, configuration: Configuration, openFile: OpenDatabaseFiles
    ) throws -> (store: Store, created: FileIdentity?) {
        try StoreFile.checkNotAFolder(path)
        try StoreFile.checkCompanionNamesFit(path)
        // A link to nothing: SQLite would create the file it names with the umask's mode,
        // not 0600 (an exclusive create does not follow a link).
        var link = stat(), target = stat()
        if lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK, stat(path, &target) != 0, errno == ENOENT {
            throw StoreError.cannotOpen(path: path, reason: "it is a symbolic link to a file that does not exist")
        }
        if !configuration.createIfMissing {
            var info = stat()
            if stat(path, &info) != 0 {
                let code = errno
                if code == ENOENT { throw StoreError.storeNotFound(path: path) }
                throw StoreFile.cannotOpen(path, code: code)
            }
        }
        let created = try createFileIfMissing(path)
        try StoreFile.checkHeader(path)
        if created == nil { try StoreFile.checkWALFilesCanExist(path) }
        return (try Store(opening: path, configuration: configuration, openFile: openFile), created)
    }

    /// A store in memory, gone when the last reference goes: for tests and previews. Reads go
    /// through the writer's connection; there are no other processes to observe.
    ///
    /// - Throws: ``StoreError/migrationFailed(migration:underlying:)`` if a migration fails;
    ///   ``StoreError/invalidConfiguration(reason:)`` as ``open(at:configuration:)`` does.
    public static func inMemory(configuration: Configuration = .init()) async throws -> Store {
        try await onBlockingQueue {
            try Self.check(configuration)
            return try Store(opening: nil, configuration: configuration, openFile: nil)
        }
    }

    /// Refuses a configuration that cannot work, before any file is touched. Thrown, not
    /// trapped: an app's configuration is its input (a kind registered twice, a table of the
    /// store's own, a name SQLite reads as a keyword, two migrations with one version).
    private static func check(_ configuration: Configuration) throws {
        if let problem = RecordTypeCheck.problem(configuration.recordTypes) {
            throw StoreError.invalidConfiguration(reason: "recordTypes: \(problem)")
        }
        if let app = configuration.appMigrations, let problem = app.problem {
            throw StoreError.invalidConfiguration(reason: "appMigrations: \(problem)")
        }
    }

    /// Opens a store whose configuration `check` passed (both entry points check it first).
    /// `openFile`: the path's entry in the registry of open database files (nil in memory); the
    /// writer's file is registered in it as soon as the writer has opened it.
    private convenience init(opening path: String?, configuration: Configuration, openFile: OpenDatabaseFiles?) throws {
        let options = Database.OpenOptions(
            readOnly: false, create: true, busyTimeout: configuration.busyTimeout, vfsName: configuration.vfsName)
        let monitor = ChangeMonitor(pollInterval: configuration.observationPollInterval)
        var walFiles: WALFiles?
        // Looked at before the writer's connection reads the file (that creates the -wal), where
        // SQLite names it: beside the file a symbolic link to the store names.
        let hadWAL = path.map { access(StoreFile.realFile($0) + "-wal", F_OK) == 0 } ?? false
        let writer = try DatabaseWriter(
            path: path ?? ":memory:", options: options,
            maximumBatchSize: configuration.maximumWritesPerTransaction,
            gathersBatches: configuration.durability == .full,
            observedTables: ObservedKindTable.all(registering: configuration.recordTypes), now: configuration.clock.now,
            willCommit: { monitor.willCommit($0) }, onCommit: { _ in monitor.poke() }
        ) { database in
            // Before the first access in WAL mode, which would open the -shm (see the property).
            if configuration.exclusiveLocking { try database.execute("PRAGMA locking_mode = EXCLUSIVE") }
            if let path {
                // Before any statement takes SQLite's locks on it: from now on a descriptor of
                // this file that another opener in this process closes is parked instead.
                openFile?.identify(FileIdentity(of: path))
                // Before anything is written (WAL mode persists in the file): refuse another
                // application's database unchanged. Its -wal (what its process had not yet
                // checkpointed) stays too: this connection, the file's last, would checkpoint it
                // into the file as it closes, and delete it and the -shm. Without a -wal before,
                // the close removes the ones this connection made, as it does.
                do {
                    try StoreFile.check(database)
                } catch {
                    if hadWAL { database.skipCheckpointOnClose() }
                    throw error
                }
                try Self.enableWAL(database)
                try Self.limitWALSize(database)
            }
            try Self.apply(configuration.durability, to: database)
            for sql in configuration.writerSetupSQL { try database.execute(sql) }
            let migrator = Migrator(configuration)
            if configuration.migrateOnOpen {
                try migrator.migrate(database)
                try Self.checkRecordTables(database, configuration)
            }
            if let path {
                // A read in WAL mode opens (creating them if need be) the -wal and -shm: their
                // identities are then the ones this store uses.
                _ = try database.query("PRAGMA schema_version") { $0.int64(0) }
                configuration.willFinishOpening?()
                walFiles = WALFiles(databasePath: path, sqlitePath: database.fileName)
                database.walFiles = walFiles
            }
        }
        self.init(
            path: path, configuration: configuration, writer: writer,
            readers: configuration.exclusiveLocking
                ? nil
                : path.map {
                    ReaderPool(
                        path: $0, maximumCount: configuration.maximumReaders, busyTimeout: configuration.busyTimeout,
                        vfsName: configuration.vfsName, walFiles: walFiles)
                },
            changeMonitor: monitor, walFiles: walFiles, openFile: openFile)
    }

    // MARK: Reading and writing

    /// Runs `body` in a read transaction on a reader connection and returns its result.
    ///
    /// Reads run concurrently with each other and with a write in progress (WAL): `body` sees
    /// one committed snapshot and never waits for a write. The connection is read-only and
    /// valid only inside `body`. In memory, reads go through the writer.
    ///
    /// - Throws: what `body` throws; `CancellationError` if the task is cancelled before the read
    ///   starts (or `body` calls ``Database/checkCancellation()`` after); ``StoreError/closed``
    ///   once the store is closed.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        if let readers { return try await readers.read(body) }
        // Read-only as a reader's connection is (an in-memory read used to write): a statement
        // that writes fails when run, and query_only may not be touched. (Not by setting
        // query_only: a flag pragma expires every prepared statement of the connection.)
        return try await writer.write { db in
            db.refusesWrites = true
            db.locksQueryOnly = true
            defer {
                db.refusesWrites = false
                db.locksQueryOnly = false
            }
            return try body(db)
        }
    }

    /// Runs `body` in a write transaction, serialized with every other write of this store.
    /// Committed if it returns, rolled back and rethrown if it throws; returns once committed.
    ///
    /// Writes that arrive while another is being written are committed together (group commit),
    /// each in its own savepoint: a failing `body` rolls back only its own changes. The call
    /// returns once the transaction holding its write has committed, with the durability of
    /// ``Configuration/durability``. `body` runs on the writer's own queue, never on Swift's
    /// cooperative pool.
    ///
    /// - Throws: what `body` throws; `CancellationError` if the task is cancelled before the
    ///   write starts (or `body` calls ``Database/checkCancellation()`` after);
    ///   ``StoreError/writeLockTimeout(path:waited:)`` when another process holds the write lock
    ///   past ``Configuration/busyTimeout``; ``SQLiteError`` when the commit fails (a full
    ///   disk, say); ``StoreError/closed`` once the store is closed.
    ///
    /// Every record it changes is reported to observers (`observe`, `changes(of:)`, another
    /// process's `storectl watch`) once committed, whether through the tables (`db.events`, ...)
    /// or raw SQL (`db.execute`): SQLite's own hooks collect the changes. Nothing of a write that
    /// throws, nor of a raw `ROLLBACK TO` a savepoint inside it, is ever reported.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.write(body)
    }

    /// `write(_:)` for a body that touches nothing but the database and may therefore run more
    /// than once (only its last run counts): the store's own record methods. Batched with other
    /// such writes it needs no savepoint (see `DatabaseWriter`).
    func write<T: Sendable>(rerunnable: Bool, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.write(rerunnable: rerunnable, body)
    }

    // MARK: Migrations

    /// Applies pending migrations; returns those applied (empty if there was nothing to do).
    /// They run in one transaction, each in its own savepoint with its checksum and time recorded.
    ///
    /// - Throws: ``StoreError/migrationModified(migration:recorded:expected:)`` or
    ///   ``StoreError/databaseFromFuture(unknownMigrations:)`` before applying anything;
    ///   ``StoreError/migrationFailed(migration:underlying:)`` when one fails (those before it
    ///   stay applied, it and those after it do not); the error of the commit itself (a full
    ///   disk) as it is, nothing applied; ``StoreError/storeMoved(path:)`` if one of the store's
    ///   files was removed or replaced since it opened, nothing applied.
    @discardableResult
    public func migrate() async throws -> [Migration] {
        let migrator = Migrator(configuration)
        let configuration = configuration
        return try await writer.exclusive { db in
            // As for a write: a commit after the store's files were replaced goes through a stale
            // WAL index (see `WALFiles`), here to a deleted -wal, and said "applied".
            try StoreFile.checkStill(db.walFiles)
            let applied = try migrator.migrate(db)
            try Self.checkRecordTables(db, configuration)
            return applied
        }
    }

    /// Refuses registered kinds whose tables, as the migrations made them, cannot hold them
    /// (`RecordTypeCheck.problem(in:_:)`).
    private static func checkRecordTables(_ database: Database, _ configuration: Configuration) throws {
        if let problem = try RecordTypeCheck.problem(in: database, configuration.recordTypes) {
            throw StoreError.invalidConfiguration(reason: "recordTypes: \(problem)")
        }
    }

    /// The migrations `migrate()` would apply, changing nothing; throws as `migrate()` does for a
    /// database with a modified or unknown migration.
    public func pendingMigrations() async throws -> [MigrationStatus] {
        let migrator = Migrator(configuration)
        return try await writer.exclusive { try migrator.pending($0) }
    }

    /// The namespaces of app migrations the store records besides this configuration's, sorted:
    /// apps whose tables, and so perhaps record kinds, this program does not register (storectl
    /// on an app's store). An export leaves their records out; a publish refuses.
    package func otherAppNamespaces() async throws -> [String] {
        let namespace = configuration.appMigrations?.namespace
        return try await read { try Migrator.otherAppNamespaces($0, besides: namespace) }
    }

    /// The state of every migration known to this build or recorded in the database.
    public func migrationStatus() async throws -> [MigrationStatus] {
        let migrator = Migrator(configuration)
        return try await writer.exclusive { try migrator.status($0) }
    }

    /// Rebuilds the database file without its free pages (`VACUUM`), and returns its size in
    /// bytes before and after (page count times page size). SQLite reuses the pages records
    /// leave free but never hands them back: after deleting most records, or evicting most
    /// images, the file keeps its size until vacuumed. "The VACUUM command rebuilds the database
    /// file, repacking it into a minimal amount of disk space" (https://sqlite.org/lang_vacuum.html).
    ///
    /// It runs on the writer, so writes asked for meanwhile wait for it; reads go on; another
    /// process's write lock is waited for up to the busy timeout
    /// (``StoreError/writeLockTimeout(path:waited:)`` past it). It needs
    /// free disk space for a copy of the database, and writes the whole database through the WAL
    /// (cut back to 4 MiB afterwards). Records, sync state and the change log are unchanged and
    /// no change is observed. Then a passive checkpoint copies it into the file, which shrinks
    /// unless a reader holds an older snapshot (it shrinks at a later checkpoint).
    ///
    /// - Throws: ``StoreError/storeMoved(path:)`` if the store's file, `-wal` or `-shm` was
    ///   removed or replaced since it opened, writing nothing: as for a write, the commit would
    ///   go through a stale WAL index over another process's confirmed frames (see `WALFiles`).
    public func vacuum() async throws -> (bytesBefore: Int, bytesAfter: Int) {
        try await writer.exclusive { db in
            try StoreFile.checkStill(db.walFiles)
            func size() throws -> Int {
                let count = try db.query("PRAGMA page_count") { $0.int64(0) }.first ?? 0
                let pageSize = try db.query("PRAGMA page_size") { $0.int64(0) }.first ?? 0
                return Int(count * pageSize)
            }
            let before = try size()
            do {
                try db.executeScript("VACUUM")
            } catch let error as SQLiteError where error.code == SQLiteError.busy || error.code == SQLiteError.locked {
                // Past the busy timeout, as a write says it (not "database is locked").
                throw StoreError.writeLockTimeout(path: db.path, waited: db.busyTimeout)
            }
            let after = try size()
            if path != nil { try Self.checkpointPassively(db) }
            return (before, after)
        }
    }

    /// Copies the WAL's committed pages into the database file now, waiting for no reader or
    /// writer (`PRAGMA wal_checkpoint(PASSIVE)`). Closing the last connection does the same and
    /// then deletes the -wal, but SQLite keeps a failure of that checkpoint to itself: on a full
    /// disk the close left the -wal (and a main file that alone is not the store) without a word.
    /// storectl calls this before `close()`, to say so. Throws the checkpoint's error.
    ///
    /// Throws ``StoreError/storeMoved(path:)`` instead, copying nothing, once one of the store's
    /// files was removed or replaced: with the `-wal` and `-shm` deleted under the store (and
    /// made anew by another process), the checkpoint copied the store's stale WAL over the
    /// database file, and another process's commits since were gone (the close skips its own
    /// checkpoint then, see `Database.close()`); with the database replaced, the close does
    /// what can be done (`DatabaseWriter.close()`, `WALFiles.removeOrphanedWALFiles`).
    package func checkpoint() async throws {
        guard path != nil else { return }
        try await writer.exclusive { db in
            try StoreFile.checkStill(db.walFiles)
            try Self.checkpointPassively(db)
        }
    }

    /// `PRAGMA wal_checkpoint(PASSIVE)`: "Checkpoint as many frames as possible without waiting
    /// for any database readers or writers to finish" (https://sqlite.org/pragma.html#pragma_wal_checkpoint).
    private static func checkpointPassively(_ db: Database) throws {
        _ = try db.query("PRAGMA wal_checkpoint(PASSIVE)") { _ in () }
    }

    /// Finishes every observation, waits for the writes already asked for, then closes the
    /// store's connections. Later calls throw ``StoreError/closed``. Closing twice is harmless.
    ///
    /// A sync or image load under way is not cancelled: its download runs on until its next
    /// read or write of the store, which throws ``StoreError/closed`` (a sync closed before its
    /// commit changes nothing; one closed during its image downloads has its records, and tries
    /// the images again next sync). Cancel their tasks first to stop them at once.
    ///
    /// If the store's file was removed or replaced while it was open (a backup restored over
    /// it), the `-wal` and `-shm` at its path are still the ones the store opened, and hold the
    /// old file's changes: SQLite's own close leaves them then, and the next process to open
    /// the path would read them into the new file. Once its connections are closed the store
    /// removes them, unless another process has them open (another process that had the old
    /// file open, or opened the path since): they are then left, and the processes that have
    /// the store open must be stopped before the path is opened again. Restore a backup only
    /// once no process has the store open.
    public func close() async {
        _ = await closeReportingLeftFiles()
    }

    /// ``close()``, and the old file's `-wal` and `-shm` it had to leave at the path because
    /// another process may have them open (empty if the file was not replaced, or they were
    /// removed): for storectl, which warns. See `WALFiles.removeOrphanedWALFiles`.
    package func closeReportingLeftFiles() async -> [String] {
        changeMonitor.close()
        // Checkpoints first, passively, if the file was renamed away or replaced (see
        // `DatabaseWriter.close()`).
        await writer.close()
        await readers?.close()
        // Every connection is closed: SQLite's locks on the old -shm and the old file are gone
        // with them, and the descriptors parked on the old file may go too.
        openFile?.release()
        return walFiles?.removeOrphanedWALFiles() ?? []
    }

    /// The image cache's reads and writes for the image pipeline. Holds the connections, not the
    /// store.
    private static func imageCacheAccess(
        writer: DatabaseWriter, readers: ReaderPool?, configuration: Configuration
    ) -> ImageCacheAccess {
        let budget = configuration.imageCacheBudget
        let clock = configuration.clock
        return ImageCacheAccess(
            contains: { url in
                let now = clock.now()
                let body: @Sendable (Database) throws -> Bool = { try $0.images(budget: budget, now: now).contains(url) }
                if let readers { return try await readers.read(body) }
                return try await writer.write(body)
            },
            insertIfAbsent: { url, data, contentType in
                let now = clock.now()
                return try await writer.write { db in
                    try db.images(budget: budget, now: now).insertIfAbsent(url, data: data, contentType: contentType) != nil
                }
            },
            budget: budget)
    }

    /// The change log's reads for the change monitor. Holds the writer weakly: the writer
    /// holds the monitor (it announces commits), so a strong reference would keep both alive.
    private static func changeLogAccess(writer: DatabaseWriter, readers: ReaderPool?) -> ChangeLogAccess {
        ChangeLogAccess(
            latestTransaction: { [weak writer] in
                let body: @Sendable (Database) throws -> Int64 = { try ChangeLogTable(db: $0).latestTransaction() }
                if let readers { return try await readers.read(body) }
                guard let writer else { throw StoreError.closed }
                return try await writer.write(body)
            },
            batchesAfter: { [weak writer] transaction, completion in
                let body: @Sendable (Database) throws -> [ChangeBatch] = {
                    try ChangeLogTable(db: $0).batches(after: transaction)
                }
                if let readers { return readers.read(body, completion: completion) }
                guard let writer else { return completion(.failure(StoreError.closed)) }
                Task {
                    do { completion(.success(try await writer.write(body))) } catch { completion(.failure(error)) }
                }
            })
    }

    /// Open reader connections (for tests that check nothing leaks).
    var openReaderConnections: Int { readers?.openConnections ?? 0 }

    // MARK: Opening helpers

    /// Runs blocking work (opening, migrating) off the cooperative thread pool.
    static func onBlockingQueue<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            // A serial queue of its own gets its own thread; global queues share the cooperative
            // pool's threads on Linux, and opening may wait on another process's lock.
            DispatchQueue(label: "store.open", qos: .userInitiated).async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Creates an empty database file with mode 0600 (owner read and write only) so that the
    /// store's data is never readable by other users, whatever the umask. SQLite creates its
    /// -wal and -shm files with the same permissions as the database file.
    /// Returns the identity of the file it created (device and inode, from the descriptor of
    /// the create), nil if the file was there already (or, should `fstat` fail, unknown).
    @discardableResult
    static func createFileIfMissing(_ path: String) throws -> FileIdentity? {
        let descriptor = Foundation.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if descriptor >= 0 {
            // Taken from the descriptor: the path may name another file by the time it is
            // looked at again.
            let identity = FileIdentity(ofDescriptor: descriptor)
            // Another store of this process may have opened the new file already.
            OpenDatabaseFiles.close(descriptor)
            return identity
        }
        let code = errno
        if code == EEXIST { return nil }
        throw StoreFile.cannotOpen(path, code: code)
    }

    /// `PRAGMA journal_mode = WAL`: "WAL provides more concurrency as readers do not block
    /// writers and a writer does not block readers" (https://sqlite.org/wal.html). It persists
    /// in the file. The sync setting is per connection: see `apply(_:to:)`.
    private static func enableWAL(_ database: Database) throws {
        // Changing the journal mode needs an exclusive lock and may report SQLITE_BUSY without
        // calling the busy handler while another process opens the same new file: retry for up
        // to the busy timeout, then say, as a write does, that another process holds the lock.
        let clock = ContinuousClock(), deadline = clock.now.advanced(by: database.busyTimeout)
        while true {
            do {
                try database.executeScript("PRAGMA journal_mode = WAL")
                break
            } catch let error as SQLiteError where error.code == SQLiteError.busy || error.code == SQLiteError.locked {
                if clock.now >= deadline {
                    throw StoreError.writeLockTimeout(path: database.path, waited: database.busyTimeout)
                }
                usleep(25_000)
            }
        }
    }

    /// The size the WAL is cut back to once a checkpoint lets it start over.
    static let walSizeLimit = 4 << 20

    /// `PRAGMA journal_size_limit` on the writer: without it the WAL keeps its largest size for as
    /// long as the store is open (a 200,000-record sync left 38 MB; a write burst beside a long
    /// read, hundreds). "Each time a transaction is committed or a WAL file resets, SQLite compares
    /// the size of the rollback journal file or WAL file left in the file-system to the size limit
    /// set by this pragma and if the journal or WAL file is larger it is truncated to the limit"
    /// (https://sqlite.org/pragma.html#pragma_journal_size_limit).
    /// 4 MiB holds a full default auto-checkpoint cycle (1,000 pages), so steady writing never
    /// truncates and regrows it. Per connection; only the writer resets the WAL.
    private static func limitWALSize(_ database: Database) throws {
        try database.executeScript("PRAGMA journal_size_limit = \(walSizeLimit)")
    }

    /// Sets the writer connection's sync mode (see `Durability`, which quotes SQLite on each).
    /// Per connection, not stored in the file; readers never commit, so only the writer's counts.
    private static func apply(_ durability: Durability, to database: Database) throws {
        switch durability {
        case .normal:
            try database.executeScript("PRAGMA synchronous = NORMAL")
        case .full:
            try database.executeScript("PRAGMA synchronous = FULL")
            #if canImport(Darwin)
                // "This flag determines whether or not the F_FULLFSYNC syncing method is used on
                // systems that support it" (pragma.html#pragma_fullfsync; checkpoint_fullfsync, the
                // same for checkpoints). On Apple platforms fsync(2) leaves the data in the drive's
                // cache; F_FULLFSYNC asks the drive to write it out.
                try database.executeScript("PRAGMA fullfsync = ON; PRAGMA checkpoint_fullfsync = ON")
            #endif
        }
    }
}
