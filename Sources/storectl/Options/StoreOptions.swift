import ArgumentParser
import Foundation
import Store

/// `--db PATH`, accepted before the subcommand or after it.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The store's SQLite file (default: $STORECTL_DB, else $XDG_DATA_HOME/storectl/store.sqlite).", valueName: "path"))
    var db: String?

    /// The database path: --db, then STORECTL_DB, then the XDG data directory.
    var resolvedPath: String {
        let environment = ProcessInfo.processInfo.environment
        if let db, !db.isEmpty { return db }
        if let path = environment["STORECTL_DB"], !path.isEmpty { return path }
        let dataHome = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return dataHome + "/storectl/store.sqlite"
    }

    /// Opens the store, creating its folder (mode 0700) for the default location.
    func open(configure: (inout Store.Configuration) -> Void = { _ in }) async throws -> Store {
        let path = resolvedPath
        if db == nil, ProcessInfo.processInfo.environment["STORECTL_DB"]?.isEmpty ?? true {
            let folder = (path as NSString).deletingLastPathComponent
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw CLIError("cannot create the folder \(folder): \(error.localizedDescription)")
            }
        }
        var configuration = Store.Configuration()
        configure(&configuration)
        do {
            let opened = try await Store.open(at: path, configuration: configuration)
            await OpenStores.shared.register(opened)
            return opened
        } catch {
            throw CLIError("\(path): \(error)")
        }
    }
}
