import Foundation

/// What a database knows of one migration.
///
/// ``Store/migrationStatus()`` lists one per migration known to this build or recorded in the
/// database, ordered by version.
public struct MigrationStatus: Sendable, Equatable, Codable {
    /// How the database's record of a migration compares with this build.
    public enum State: String, Sendable, Codable {
        /// Recorded in the database with the checksum of this build's file.
        case applied
        /// Known to this build, not yet applied.
        case pending
        /// Recorded with a checksum that differs from this build's file: edited after release.
        case modified
        /// Recorded in the database, unknown to this build: the database is from the future.
        case unknown
        /// Recorded by an app (`owner`) whose migrations this build was not given: the app's
        /// business, neither checked nor refused here.
        case app
    }

    /// The migration's number (``Migration/version``).
    public let version: Int
    /// The migration's name (``Migration/name``), as this build or the database records it.
    public let name: String
    /// How the database's record compares with this build.
    public let state: State
    /// The checksum recorded in the database, or this build's checksum when pending.
    public let checksum: String
    /// When the migration was applied, by the store's clock; nil when pending.
    public let appliedAt: Date?
    /// The app namespace the migration belongs to (`AppMigrations.namespace`); nil for the
    /// library's own.
    public var owner: String? = nil
}
