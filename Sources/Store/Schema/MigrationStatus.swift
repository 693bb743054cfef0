import Foundation

/// What a database knows of one migration.
public struct MigrationStatus: Sendable, Equatable, Codable {
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

    public let version: Int
    public let name: String
    public let state: State
    /// The checksum recorded in the database, or this build's checksum when pending.
    public let checksum: String
    public let appliedAt: Date?
    /// The app namespace the migration belongs to (`AppMigrations.namespace`); nil for the
    /// library's own.
    public var owner: String? = nil
}
