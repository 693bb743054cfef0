import ArgumentParser
import Foundation
import Store

/// `--db PATH`, `--busy-timeout SECONDS` and `--durability normal|full`, accepted before the
/// subcommand or after it; and `withStore`, the one way a command reaches the store.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The store's SQLite file (default: $STORECTL_DB, else $XDG_DATA_HOME/storectl/store.sqlite).", valueName: "path"))
    var db: String?

    // `parsing: .unconditional`, here and on every numeric option: the next argument is the
    // value even when it starts with "-", as getopt takes it, so `--busy-timeout -1` is refused
    // as a negative number rather than as a missing value. Options taking a path or a name keep
    // ArgumentParser's default, so `--out --json` is not read as a file named "--json".
    @Option(
        name: .customLong("busy-timeout"), parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds, 0 to 86400 (fractions too), a write waits for another process's write before failing (default: $STORECTL_BUSY_TIMEOUT, else 60).",
            valueName: "seconds"))
    var busyTimeout: BusyTimeout?

    @Option(
        name: .customLong("durability"),
        help: ArgumentHelp(
            "normal (a commit survives a crash of storectl, maybe not a power cut) or full (it survives a power cut) (default: $STORECTL_DURABILITY, else full).",
            valueName: "normal|full"))
    var durability: Store.Durability?

    /// The options above that take a value as the next argument (`--db PATH`), for reading a
    /// command line before ArgumentParser does (`Storectl.checkHelpTopic`).
    static let namesTakingValues: Set<String> = ["--db", "--busy-timeout", "--durability"]

    /// An empty --db or STORECTL_DB is a mistake (an unset variable in a script), not a request
    /// for the default store; a malformed STORECTL_BUSY_TIMEOUT or STORECTL_DURABILITY too.
    func validate() throws {
        if db?.isEmpty == true { throw ValidationError("--db: the path is empty") }
        if db == nil, ProcessInfo.processInfo.environment["STORECTL_DB"]?.isEmpty == true {
            throw ValidationError("STORECTL_DB is set but empty: name the store's file, or unset it for the default store")
        }
        if isDefaultLocation, Self.defaultDataHome(ProcessInfo.processInfo.environment) == nil {
            // HOME="" used to put the default store in /.local/share.
            throw ValidationError(
                "cannot place the default store: HOME is not an absolute path and XDG_DATA_HOME is not set; name the store with --db or STORECTL_DB"
            )
        }
        _ = try configuration()
    }

    /// The folder the default store's folder goes in: $XDG_DATA_HOME if it is an absolute path,
    /// else $HOME/.local/share (the user's home from the password database if HOME is unset);
    /// nil if HOME is empty or relative. The XDG Base Directory Specification: "If
    /// $XDG_DATA_HOME is either not set or empty, a default equal to $HOME/.local/share should
    /// be used", and "All paths set in these environment variables must be absolute. If an
    /// implementation encounters a relative path in any of these variables it should consider
    /// the path invalid and ignore it."
    static func defaultDataHome(_ environment: [String: String]) -> String? {
        if let dataHome = environment["XDG_DATA_HOME"], dataHome.hasPrefix("/") { return dataHome }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home.hasPrefix("/") ? home + "/.local/share" : nil
    }

    /// The database path: --db, then STORECTL_DB, then the XDG data directory.
    var resolvedPath: String {
        let environment = ProcessInfo.processInfo.environment
        if let db, !db.isEmpty { return db }
        if let path = environment["STORECTL_DB"], !path.isEmpty { return path }
        // `validate()` refused a default location without an absolute data home.
        let dataHome = Self.defaultDataHome(environment) ?? NSHomeDirectory() + "/.local/share"
        return dataHome + "/storectl/store.sqlite"
    }

    /// True when neither --db nor STORECTL_DB names the file.
    private var isDefaultLocation: Bool {
        db == nil && ProcessInfo.processInfo.environment["STORECTL_DB"]?.isEmpty ?? true
    }

    /// The busy timeout (--busy-timeout, then STORECTL_BUSY_TIMEOUT, else the library's 60 s) and
    /// durability (--durability, then STORECTL_DURABILITY, else the library's full).
    private func configuration() throws -> Store.Configuration {
        let environment = ProcessInfo.processInfo.environment
        var configuration = Store.Configuration()
        if let timeout = try busyTimeout
            ?? environment["STORECTL_BUSY_TIMEOUT"].map({
                try BusyTimeout(environment: $0, name: "STORECTL_BUSY_TIMEOUT")
            })
        {
            configuration.busyTimeout = timeout.duration
        }
        if let durability = try durability
            ?? environment["STORECTL_DURABILITY"].map({ text in
                guard let mode = Store.Durability(rawValue: text) else {
                    throw ValidationError("STORECTL_DURABILITY: '\(text)' is not normal or full")
                }
                return mode
            })
        {
            configuration.durability = durability
        }
        return configuration
    }

    /// Opens the store, runs `body` with it, and closes it on every path (so SQLite folds the WAL
    /// into the main file and deletes the -wal and -shm files: a copy of the file alone has every
    /// write). Store errors, from opening or from `body`, become one sentence naming the file
    /// (exit 1); other errors (usage errors, `ExitCode`, cancellation, a command's own
    /// `CLIError`) pass through as they are.
    ///
    /// `access` says whether a missing --db or STORECTL_DB file is created or refused (see
    /// `StoreAccess`); the default location, and its folder (mode 0700), are created on first
    /// use. A `.creating` command that fails removes the file it created.
    ///
    /// A store whose -shm cannot be made (a full disk) is opened without one, in exclusive
    /// locking mode, so that it can be read and exported: for `.existing` and `.inspecting`
    /// commands, unless `exclusiveOnFullDisk` is false (`watch`, which would hold the lock for
    /// as long as it runs). A `.creating` command fails at once instead: it must write, and a
    /// sync would hold the lock through its downloads only to fail at its commit.
    func withStore<T>(
        _ access: StoreAccess,
        configure: (inout Store.Configuration) throws -> Void = { _ in },
        exclusiveOnFullDisk: Bool = true,
        _ body: (Store) async throws -> T
    ) async throws -> T {
        let path = resolvedPath
        var configuration = try configuration()
        try configure(&configuration)
        if isDefaultLocation {
            let folder = PathName.folder(of: path)
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw CLIError("cannot create the folder \(folder): \(error.localizedDescription)")
            }
        }
        configuration.createIfMissing = access == .creating || isDefaultLocation
        // The library makes an empty file a new store: a `list` migrated it in place.
        if access == .existing, !isDefaultLocation, Self.isEmptyFile(path) {
            throw CLIError("the store \(path) is an empty file, not a store yet (a command that adds, or migrate, makes it one)")
        }
        let store: Store
        let created: FileIdentity?
        do {
            if access == .inspecting, Self.isEmptyFile(path) {
                // An empty file is a new store, every migration pending: said from a store in
                // memory, so the file stays empty (opened, it got SQLite's header and WAL mode,
                // and the next read command migrated it).
                (store, created) = (try await Store.inMemory(configuration: configuration), nil)
            } else {
                do {
                    (store, created) = try await Store.openReportingCreation(at: path, configuration: configuration)
                } catch let error as SQLiteError
                    where SQLiteError.ioErrorSharedMemory.contains(error.extendedCode) && access != .creating
                    && exclusiveOnFullDisk
                {
                    // A full disk: SQLite cannot make the store's -shm, and no command could read
                    // it, not even an export to rescue it onto another disk. Without a -shm it
                    // can (see `exclusiveLocking`); what needs room still fails, saying so.
                    if Self.toldOfExclusiveLocking.withLock({ told in
                        defer { told = true }; return !told
                    }) {
                        Output.printError(
                            "\(path): SQLite cannot make the store's -shm: \(error.message); opened without it, in exclusive locking mode (other programs that open the store wait until this command ends)"
                        )
                    }
                    configuration.exclusiveLocking = true
                    (store, created) = try await Store.openReportingCreation(at: path, configuration: configuration)
                }
            }
        } catch {
            throw Self.describe(error, path: path)
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body(store))
        } catch {
            result = .failure(error)
        }
        await Self.checkpointSayingIfItFails(store, path: path)
        Self.warnOfLeftFiles(await store.closeReportingLeftFiles(), path: path)
        switch result {
        case .success(let value):
            return value
        case .failure(let error):
            // Only the file this command created, and only while nothing else has written to it
            // or has it open: another command may have opened the new store meanwhile.
            if access == .creating, let created { _ = Store.removeUntouched(at: path, created: created) }
            switch error {
            case is StoreError, is SQLiteError: throw Self.describe(error, path: path)
            default: throw error
            }
        }
    }

    /// Whether this process said that it opened a store without its -shm (export opens the
    /// store twice).
    private static let toldOfExclusiveLocking = LockedBox(false)

    /// Before closing: a checkpoint that fails for want of space or on an I/O error leaves the
    /// store's latest writes in its -wal, and the close would say nothing (SQLite keeps that
    /// failure to itself). Said on stderr; the command's outcome stands: what it wrote is
    /// committed, in the -wal, which the next opener folds back in. (Another process's reader
    /// is no failure: a passive checkpoint copies what it can and returns.)
    private static func checkpointSayingIfItFails(_ store: Store, path: String) async {
        do {
            try await store.checkpoint()
        } catch let error as SQLiteError where error.code == SQLiteError.full || error.code == SQLiteError.ioError {
            Output.printError(
                "warning: \(path): the checkpoint before closing failed (\(error)); the latest writes are in \(path)-wal: keep \(path), \(path)-wal and \(path)-shm together (the next command folds the -wal back in once there is room)"
            )
        } catch {}
    }

    /// The store was replaced under the command (a backup restored over it) and another
    /// process has the old file's -wal and -shm open, so the close left them at the path: the
    /// next process to open it would read the old store's changes into the new file.
    private static func warnOfLeftFiles(_ files: [String], path: String) {
        guard !files.isEmpty else { return }
        Output.printError(
            "warning: the store \(path) was replaced or removed while this command had it open, and another process may still have the old store's \(files.joined(separator: " and ")) open (or that could not be checked), so they were left: stop the processes that have \(path) open, then remove \(files.count == 1 ? "it" : "them") before the store is opened again (the next process to open \(path) would read the old store's changes into it)"
        )
    }

    /// A store's error as one sentence that names the file, once.
    /// Whether `path` is a regular file of 0 bytes.
    private static func isEmptyFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && status.st_size == 0
    }

    /// The plain sentence for a SQLite error that is about the store's file, not the command:
    /// SQLITE_READONLY, a store file read-only to this user (its permissions, an immutable flag,
    /// a read-only file system), was "SQLite error 8: attempt to write a readonly database -
    /// while executing" the statement. Nil for any other error.
    static func fileProblem(_ error: any Error, path: String) -> TerminalText? {
        // SQLITE_READONLY itself, not its extended codes (a database moved, a WAL that cannot be
        // recovered...), which say something else and keep SQLite's words.
        guard let error = error as? SQLiteError, error.extendedCode == SQLiteError.readOnly else { return nil }
        return
            "cannot write to the store \(path): it is read-only (its permissions, or a read-only file system); nothing was written"
    }

    private static func describe(_ error: any Error, path: String) -> CLIError {
        if let problem = fileProblem(error, path: path) { return CLIError(problem) }
        switch error as? StoreError {
        // These name the path already.
        case .notAStore, .storeNotFound, .cannotOpen, .writeLockTimeout, .storeMoved: return CLIError("\(error)")
        default: return CLIError("\(path): \(error)")
        }
    }

}
