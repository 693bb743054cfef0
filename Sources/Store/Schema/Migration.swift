/// One schema change: a file `Migrations/NNNN_name.sql`, embedded at build time.
public struct Migration: Sendable, Equatable {
    /// The file's number: 1 for `0001_create_frameworks.sql`.
    public let version: Int
    /// The file's name without number and extension: `create_frameworks`.
    public let name: String
    /// The file's exact text.
    public let sql: String

    /// A migration numbered `version` (from 1, without gaps in a list) that runs `sql`. For an
    /// app's own list in ``Store/Configuration/migrations`` (whose default is the store's own,
    /// embedded from `Migrations/*.sql` at build time).
    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }

    /// `0001_create_frameworks`, as the file is named.
    public var identifier: String {
        let number = String(version)
        return String(repeating: "0", count: max(0, 4 - number.count)) + number + "_" + name
    }

    /// The SHA-256 of the file's bytes, in lowercase hex; recorded when the migration is applied
    /// and compared on every open, so an edited migration is refused.
    public var checksum: String { SHA256.hexDigest(of: sql.utf8) }
}
