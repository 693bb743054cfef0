import Foundation
import Testing

@testable import Store

@Suite("SQLiteError")
struct SQLiteErrorTests {
    @Test func describesAConstraintFailureWithCodeMessageAndSQL() async throws {
        try await withTemporaryStore { store, _ throws in
            let sql = "INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES ('x', NULL, 'x', 'x', 'x')"
            let error = try #require(await #expect(throws: SQLiteError.self) { try await store.write { try $0.execute(sql) } })
            #expect(error.code == 19)
            #expect(error.extendedCode == 1299) // SQLITE_CONSTRAINT_NOTNULL
            #expect(error.message == "NOT NULL constraint failed: frameworks.name")
            #expect(error.sql == sql)
            let expected = "SQLite error 19: NOT NULL constraint failed: frameworks.name - while executing `\(sql)`"
            #expect(error.description == expected)
        }
    }

    @Test("a file that cannot be opened says what the system said, not only \"unable to open database file\"")
    func cannotOpenSaysWhy() throws {
        let error = try #require(
            #expect(throws: SQLiteError.self) {
                _ = try Database(path: "/nonexistent-\(getpid())/folder/store.sqlite", options: .init())
            })
        #expect(error.code == SQLiteError.cantOpen)
        #expect(error.message.contains("unable to open database file (No such file or directory)"), "\(error)")
    }

    @Test func reportsADuplicatePrimaryKeyWithItsExtendedCode() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("arkit"))
            let sql = """
                INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES ('arkit', 'a', 'b', 'c', 'd')
                """
            let error = try #require(await #expect(throws: SQLiteError.self) { try await store.write { try $0.execute(sql) } })
            #expect(error.code == SQLiteError.constraint)
            #expect(error.extendedCode == SQLiteError.constraintPrimaryKey)
            let expected = "SQLite error 19: UNIQUE constraint failed: frameworks.id - while executing `\(sql)`"
            #expect(error.description == expected)
        }
    }

    @Test func describesASyntaxError() async throws {
        try await withTemporaryStore { store, _ throws in
            let error = try #require(
                await #expect(throws: SQLiteError.self) {
                    try await store.read { try $0.fetchAll("SELEC 1") }
                })
            #expect(error.code == 1)
            #expect(error.description == #"SQLite error 1: near "SELEC": syntax error - while executing `SELEC 1`"#)
        }
    }

    @Test func refusesToWriteInsideARead() async throws {
        try await withTemporaryStore { store, _ throws in
            await #expect(throws: SQLiteError.self) {
                try await store.read { try $0.frameworks.insert(Fixtures.framework("x")) }
            }
            #expect(try await store.frameworks.count() == 0)
        }
    }

    @Test func takesThePrimaryCodeFromTheLowEightBits() {
        #expect(SQLiteError(extendedCode: 1555, message: "m").code == 19)
        #expect(SQLiteError(extendedCode: 517, message: "m").code == 5) // SQLITE_BUSY_SNAPSHOT
        #expect(SQLiteError(extendedCode: 5, message: "database is locked").description == "SQLite error 5: database is locked")
    }
}
