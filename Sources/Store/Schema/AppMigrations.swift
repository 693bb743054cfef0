/// An app's own migrations: applied after the library's, recorded in `app_migrations` under
/// the app's namespace (so they never collide with the library's numbers or another app's),
/// checksummed and refused on edit the same way.
///
/// A program that opens the store without them (storectl) lists them as the app's
/// (`MigrationStatus.State.app`) and does not refuse the store because of them.
public struct AppMigrations: Sendable, Equatable {
    /// The app's name for its migrations: `reminders`. Lowercase letters, digits, `_`, `-`, `.`.
    public var namespace: String
    /// Numbered from 1, in order.
    public var migrations: [Migration]

    /// The app's migrations as given; nothing is checked here. When a store opens with them
    /// (`Store.Configuration.appMigrations`), those not yet recorded under `namespace` are
    /// applied in order, in one transaction, each in its own savepoint; the open throws
    /// `StoreError.migrationModified` if an applied one's SQL changed since, and
    /// `StoreError.databaseFromFuture` if the store records one this list does not have.
    public init(namespace: String, migrations: [Migration]) {
        self.namespace = namespace
        self.migrations = migrations
    }

    /// Why these migrations cannot be applied, or nil: two with one version (the second failed
    /// with SQLite's "UNIQUE constraint failed: app_migrations...").
    var problem: String? {
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789_-.".utf8)
        if namespace.isEmpty || !namespace.utf8.allSatisfy(allowed.contains) {
            return "the namespace '\(namespace)' must be lowercase letters, digits, _, - and ."
        }
        if let migration = migrations.first(where: { $0.version < 1 }) {
            return "the migration '\(migration.name)' of '\(namespace)' has version \(migration.version): numbered from 1"
        }
        var versions = Set<Int>()
        for migration in migrations where !versions.insert(migration.version).inserted {
            return "two migrations of '\(namespace)' have version \(migration.version)"
        }
        return nil
    }
}
