import Foundation
import GRDB
import Store

/// GRDB's ways of doing the same work.
struct GRDBFramework: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "frameworks"
    var id: String
    var name: String
    var imageName: String
    var urlString: String
    var description: String

    enum CodingKeys: String, CodingKey {
        case id, name, description
        case imageName = "image_name"
        case urlString = "url_string"
    }

    init(_ framework: Framework) {
        (id, name, imageName, urlString, description) =
            (framework.id, framework.name, framework.imageName, framework.urlString, framework.description)
    }
}

enum GRDBBaseline {
    static func open(_ path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = \(RawSQLite.storeSynchronous)") }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { try $0.execute(sql: RawSQLite.schema) }
        return pool
    }

    static func insertCodable(_ frameworks: [Framework], into pool: DatabasePool) throws {
        try pool.write { db in
            for framework in frameworks { try GRDBFramework(framework).insert(db) }
        }
    }

    static func insertCachedStatement(_ frameworks: [Framework], into pool: DatabasePool) throws {
        try pool.write { db in
            let statement = try db.cachedStatement(
                sql: "INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES (?, ?, ?, ?, ?)")
            for framework in frameworks {
                try statement.execute(arguments: [
                    framework.id, framework.name, framework.imageName, framework.urlString, framework.description,
                ])
            }
        }
    }

    static func fetchAllCodable(_ pool: DatabasePool) throws -> [GRDBFramework] {
        try pool.read { try GRDBFramework.order(Column("id")).fetchAll($0) }
    }

    static func fetchRowCursor(_ pool: DatabasePool) throws -> [Framework] {
        try pool.read { db in
            var frameworks: [Framework] = []
            let rows = try Row.fetchCursor(
                db, sql: "SELECT id, name, image_name, url_string, description FROM frameworks ORDER BY id")
            while let row = try rows.next() {
                frameworks.append(Framework(id: row[0], name: row[1], imageName: row[2], urlString: row[3], description: row[4]))
            }
            return frameworks
        }
    }
}
