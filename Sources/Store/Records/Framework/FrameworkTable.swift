/// Frameworks inside a transaction: `try db.frameworks.insert(framework)`.
///
/// Every method runs on the connection of the `read` or `write` closure it is called from.
/// Writing methods throw `SQLiteError` (readonly) when called inside `Store.read`.
public struct FrameworkTable {
    let db: Database

    private static let columns = "id, name, image_name, url_string, description"

    static func decode(_ row: some RowReader) -> Framework {
        Framework(id: row.text(0), name: row.text(1), imageName: row.text(2), urlString: row.text(3), description: row.text(4))
    }

    /// The query of `fetchAll`, and how `decode` reads its columns.
    static let fetchAllQuery = "SELECT \(columns) FROM frameworks ORDER BY id"
    static let fetchAllColumns: [ColumnCopy] = Array(repeating: .text, count: 5)

    /// Every framework, ordered by id.
    public func fetchAll() throws -> [Framework] {
        try db.query(Self.fetchAllQuery, [], Self.decode)
    }

    /// Every framework, ordered by id as `fetchAll` orders them, handed to `body` one at a time
    /// as a cursor steps: none is kept, so a table of any size is read in bounded memory.
    ///
    /// `body` runs inside the `read` or `write` closure this is called from, on its connection;
    /// an error it throws ends the walk and is rethrown. The task's cancellation is checked
    /// every few hundred rows (`CancellationError`).
    public func fetchEach(_ body: (Framework) throws -> Void) throws {
        try db.forEachRow(Self.fetchAllQuery) { try body(Self.decode($0)) }
    }

    /// `fetchEach`: sync, export and publish walk frameworks in id order, which is `fetchAll`'s.
    func forEachRecord(_ body: (Framework) throws -> Void) throws { try fetchEach(body) }

    /// The framework with this id, or nil.
    public func find(_ id: String) throws -> Framework? {
        let statement = try db.cachedStatement(
            literal: "SELECT id, name, image_name, url_string, description FROM frameworks WHERE id = ?")
        try statement.bind(id, at: 1)
        defer { statement.reset() }
        return try statement.step() ? Self.decode(statement) : nil
    }

    /// The number of frameworks.
    public func count() throws -> Int {
        try db.query("SELECT count(*) FROM frameworks") { $0.int(0) }[0]
    }

    /// Inserts a new framework; `StoreError.recordExists` if its id is taken.
    public func insert(_ framework: Framework) throws {
        try framework.validate()
        let statement = try db.cachedStatement(
            literal: "INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES (?, ?, ?, ?, ?)")
        do {
            _ = try db.recordingInsert(of: .framework, key: framework.id) {
                try Self.withFields(of: framework, boundTo: statement) {
                    defer { statement.reset() }
                    _ = try statement.step()
                }
                return true
            }
        } catch let error as SQLiteError where error.extendedCode == SQLiteError.constraintPrimaryKey {
            throw StoreError.recordExists(kind: .framework, key: framework.id)
        }
    }

    /// Inserts the framework unless one with its id exists (then nothing changes); true if it
    /// was inserted. One statement, no lookup first: sync's fast path for new records.
    @discardableResult
    public func insertIfAbsent(_ framework: Framework) throws -> Bool {
        try framework.validate()
        let statement = try db.cachedStatement(
            literal: """
                INSERT INTO frameworks (id, name, image_name, url_string, description) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (id) DO NOTHING
                """)
        return try db.recordingInsert(of: .framework, key: framework.id) {
            try Self.withFields(of: framework, boundTo: statement) {
                defer { statement.reset() }
                _ = try statement.step()
            }
            return db.changes == 1
        }
    }

    /// Replaces an existing framework; `StoreError.recordNotFound` if there is none with its id.
    public func update(_ framework: Framework) throws {
        try framework.validate()
        try db.execute(
            "UPDATE frameworks SET name = ?, image_name = ?, url_string = ?, description = ? WHERE id = ?",
            [
                .text(framework.name), .text(framework.imageName), .text(framework.urlString),
                .text(framework.description), .text(framework.id),
            ])
        guard db.changes == 1 else { throw StoreError.recordNotFound(kind: .framework, key: framework.id) }
    }

    /// Deletes the framework with this id; false if there was none.
    @discardableResult
    public func delete(_ id: String) throws -> Bool {
        try db.execute("DELETE FROM frameworks WHERE id = ?", [.text(id)])
        guard db.changes == 1 else { return false }
        return true
    }

    /// Binds id, name, imageName, urlString and description to parameters 1 to 5, read in
    /// place, while `body` runs (which steps the statement).
    static func withFields<T>(of framework: Framework, boundTo statement: Statement, _ body: () throws -> T) throws -> T {
        try statement.withText(framework.id, at: 1) {
            try statement.withText(framework.name, at: 2) {
                try statement.withText(framework.imageName, at: 3) {
                    try statement.withText(framework.urlString, at: 4) {
                        try statement.withText(framework.description, at: 5, body)
                    }
                }
            }
        }
    }
}

extension Database {
    /// The frameworks table, on this connection.
    public var frameworks: FrameworkTable { FrameworkTable(db: self) }
}
