import Foundation
import Store

extension AppMigrations {
    /// The app's `Migrations/NNNN_name.sql` files (a resource of this module), in order, under
    /// the namespace `reminders`: recorded beside the library's, checksummed the same way.
    public static func reminders() throws -> AppMigrations {
        guard let folder = Bundle.module.url(forResource: "Migrations", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "the Migrations resource is missing"])
        }
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let migrations = try files.enumerated().map { index, file in
            let stem = file.deletingPathExtension().lastPathComponent
            guard let underscore = stem.firstIndex(of: "_"), Int(stem[..<underscore]) == index + 1 else {
                throw CocoaError(
                    .fileReadCorruptFile,
                    userInfo: [
                        NSLocalizedDescriptionKey: "\(file.lastPathComponent): expected migration number \(index + 1)"
                    ])
            }
            return Migration(
                version: index + 1, name: String(stem[stem.index(after: underscore)...]),
                sql: try String(contentsOf: file, encoding: .utf8))
        }
        return AppMigrations(namespace: "reminders", migrations: migrations)
    }
}

extension Store.Configuration {
    /// A store that knows reminders: the kind registered, its migrations applied on open.
    public static func reminders() throws -> Store.Configuration {
        var configuration = Store.Configuration()
        configuration.recordTypes = [Reminder.self]
        configuration.appMigrations = try .reminders()
        return configuration
    }
}
