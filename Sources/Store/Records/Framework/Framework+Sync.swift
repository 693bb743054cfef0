import Foundation

// How sync compares frameworks: the table's part of the reconciler and the record's hash.

extension FrameworkTable: SyncedTable {
    static var kind: RecordKind { .framework }
    static func key(of record: Framework) -> String { record.id }
    static func hash(of record: Framework) -> UInt64 { RecordHash.of(record) }
    var database: Database { db }

    /// One query, compared inside SQLite without reading the row into Swift. Text compares
    /// byte for byte (the BINARY collation), as the record hash does.
    func compare(_ framework: Framework, stream: Int64) throws -> LocalComparison? {
        let statement = try db.cachedStatement(
            literal: """
                SELECT f.name = ?2 AND f.image_name = ?3 AND f.url_string = ?4 AND f.description = ?5, r.hash
                FROM frameworks AS f
                LEFT JOIN sync_records AS r ON r.stream = ?6 AND r.key = f.id
                WHERE f.id = ?1
                """)
        try statement.bind(stream, at: 6)
        return try Self.withFields(of: framework, boundTo: statement) { try LocalComparison(stepping: statement) }
    }
}

extension RecordHash {
    static func of(_ framework: Framework) -> UInt64 {
        var hash = RecordHash()
        hash.add(framework.id)
        hash.add(framework.name)
        hash.add(framework.imageName)
        hash.add(framework.urlString)
        hash.add(framework.description)
        return hash.value
    }
}
