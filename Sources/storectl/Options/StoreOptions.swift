import ArgumentParser
import Foundation
import Store

/// `--db PATH`, `--busy-timeout SECONDS` and `--durability normal|full`, accepted before the
/// subcommand or after it.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store's SQLite file (default: $STORECTL_DB, else $XDG_DATA_HOME/storectl/store.sqlite).", valueName: "path"))
    var db: String?

    @Option(name: .customLong("busy-timeout"), help: ArgumentHelp(
        "Seconds a write waits for another process's write before failing (default: $STORECTL_BUSY_TIMEOUT, else 60).",
        valueName: "seconds"))
    var busyTimeout: String?

    @Option(name: .customLong("durability"), help: ArgumentHelp(
        "normal (a commit survives a crash of storectl, maybe not a power cut) or full (it survives a power cut) (default: $STORECTL_DURABILITY, else full).",
        valueName: "normal|full"))
    var durability: String?

    /// An empty --db or STORECTL_DB is a mistake (an unset variable in a script), not a request
    /// for the default store; a malformed busy timeout too.
    func validate() throws {
        if db?.isEmpty == true { throw ValidationError("--db: the path is empty") }
        if db == nil, ProcessInfo.processInfo.environment["STORECTL_DB"]?.isEmpty == true {
            throw ValidationError("STORECTL_DB is set but empty: name the store's file, or unset it for the default store")
        }
        _ = try resolvedBusyTimeout()
        _ = try resolvedDurability()
    }

    /// The database path: --db, then STORECTL_DB, then the XDG data directory.
    var resolvedPath: String {
        let environment = ProcessInfo.processInfo.environment
        if let db, !db.isEmpty { return db }
        if let path = environment["STORECTL_DB"], !path.isEmpty { return path }
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return dataHome + "/storectl/store.sqlite"
    }

    /// --busy-timeout, then STORECTL_BUSY_TIMEOUT, else nil (the library's default, 60 s).
    func resolvedBusyTimeout() throws -> Duration? {
        let (text, name) = busyTimeout.map { ($0, "--busy-timeout") }
            ?? (ProcessInfo.processInfo.environment["STORECTL_BUSY_TIMEOUT"], "STORECTL_BUSY_TIMEOUT")
        guard let text else { return nil }
        guard let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= 86_400 else {
            throw ValidationError("\(name): '\(text)' is not a number of seconds from 0 to 86400")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// --durability, then STORECTL_DURABILITY, else nil (the library's default, full).
    func resolvedDurability() throws -> Store.Durability? {
        let (text, name) = durability.map { ($0, "--durability") }
            ?? (ProcessInfo.processInfo.environment["STORECTL_DURABILITY"], "STORECTL_DURABILITY")
        guard let text else { return nil }
        guard let mode = Store.Durability(rawValue: text) else {
            throw ValidationError("\(name): '\(text)' is not normal or full")
        }
        return mode
    }

    /// Opens the store, creating its folder (mode 0700) for the default location. With
    /// `existing`, a store named by --db or STORECTL_DB that does not exist is an error and
    /// nothing is created: for commands that only read, so a mistyped path is reported rather
    /// than made into a new store. The default location is still created on first use.
    func open(existing: Bool = false, configure: (inout Store.Configuration) -> Void = { _ in }) async throws -> Store {
        let path = resolvedPath
        let isDefault = db == nil && ProcessInfo.processInfo.environment["STORECTL_DB"]?.isEmpty ?? true
        if isDefault {
            let folder = (path as NSString).deletingLastPathComponent
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw CLIError("cannot create the folder \(folder): \(error.localizedDescription)")
            }
        }
        var configuration = Store.Configuration()
        if let timeout = try resolvedBusyTimeout() { configuration.busyTimeout = timeout }
        if let durability = try resolvedDurability() { configuration.durability = durability }
        configuration.createIfMissing = !existing || isDefault
        configure(&configuration)
        do {
            let opened = try await Store.open(at: path, configuration: configuration)
            await OpenStores.shared.register(opened)
            return opened
        } catch let error as StoreError {
            switch error {
            case .notAStore, .storeNotFound, .cannotOpen: throw CLIError("\(error)") // these name the path already
            default: throw CLIError("\(path): \(error)")
            }
        } catch {
            throw CLIError("\(path): \(error)")
        }
    }
}
