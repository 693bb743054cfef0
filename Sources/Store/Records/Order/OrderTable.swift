import Foundation

/// Orders and their items inside a transaction: `try db.orders.insert(order)`.
public struct OrderTable {
    let db: Database

    /// Every order with its items, ordered by id: `fetchEach`'s two cursors, collected.
    public func fetchAll() throws -> [Order] {
        var orders: [Order] = []
        try fetchEach { orders.append($0) }
        return orders
    }

    /// `fetchEach`: sync, export and publish walk orders in id order, which is `fetchAll`'s.
    func forEachRecord(_ body: (Order) throws -> Void) throws { try fetchEach(body) }

    /// Every order with its items, ordered by id, handed to `body` one at a time: two cursors
    /// (orders, and items in order id order) walked side by side, so no order is kept after
    /// `body` and a table of any size is read in bounded memory.
    ///
    /// `body` runs inside the `read` or `write` closure this is called from, on its connection;
    /// an error it throws ends the walk and is rethrown. A stored amount out of bounds (written
    /// around the store) throws `StoreError.invalidRecord`. The task's cancellation is checked
    /// every few hundred orders (`CancellationError`).
    public func fetchEach(_ body: (Order) throws -> Void) throws {
        let items = try db.cachedStatement(
            literal: "SELECT order_id, item_name, price_cents, aisle, quantity FROM order_items ORDER BY order_id, position")
        defer { items.reset() }
        var hasItem = try items.step()
        try db.forEachRow("SELECT id, placed_at FROM orders ORDER BY id") { row in
            let id = row.text(0)
            var collected: [OrderItem] = []
            // Items of orders that do not exist (written around the store) are skipped, as fetchAll does.
            while hasItem, items.text(0).utf8.lexicographicallyPrecedes(id.utf8) { hasItem = try items.step() }
            while hasItem, items.text(0).utf8.elementsEqual(id.utf8) {
                collected.append(try Self.decodeItem(items, from: 1, order: id, index: collected.count))
                hasItem = try items.step()
            }
            let placedAt = try StoredValue.time(row, 1, kind: .order, key: id, field: "placedAt")
            try body(try Self.checked(Order(id: id, placedAt: placedAt, items: collected)))
        }
    }

    /// The order with this id and its items, or nil.
    public func find(_ id: String) throws -> Order? { try find(id, validating: true) }

    /// `find`; with `validating` false, an order a write would refuse (no items, a negative
    /// aisle, an amount out of bounds: changed around the store) is returned as stored, for the
    /// paths that repair it: `storectl orders update`, and sync's comparison with the feed's
    /// (which then finds it different, and may update it). Values that cannot be read as their
    /// type (text in an integer column) are still errors.
    package func find(_ id: String, validating: Bool) throws -> Order? {
        guard
            let placedAt = try db.query(
                "SELECT placed_at FROM orders WHERE id = ?", [.text(id)],
                { try StoredValue.time($0, 0, kind: .order, key: id, field: "placedAt") }
            ).first
        else { return nil }
        var index = 0
        let items = try db.query(
            "SELECT item_name, price_cents, aisle, quantity FROM order_items WHERE order_id = ? ORDER BY position",
            [.text(id)]
        ) { row in
            defer { index += 1 }
            return try Self.decodeItem(row, from: 0, order: id, index: index, validating: validating)
        }
        let order = Order(id: id, placedAt: placedAt, items: items)
        return validating ? try Self.checked(order) : order
    }

    /// The number of orders.
    public func count() throws -> Int {
        try db.query("SELECT count(*) FROM orders") { $0.int(0) }[0]
    }

    /// The exact total of an order, summed in checked integer cents; nil if there is no such
    /// order. A stored amount out of bounds (written around the store) throws
    /// `StoreError.invalidRecord`; SQLite's own sum would turn an overflowing product into a float.
    public func total(_ id: String) throws -> Money? {
        guard let order = try find(id) else { return nil }
        return try order.total
    }

    /// Inserts a new order with its items; `StoreError.recordExists` if its id is taken.
    public func insert(_ order: Order) throws {
        try order.validate()
        _ = try db.recordingInsert(of: .order, key: order.id) {
            do {
                try db.execute(
                    "INSERT INTO orders (id, placed_at) VALUES (?, ?)",
                    [.text(order.id), .integer(try Self.storedTime(of: order))])
            } catch let error as SQLiteError where error.extendedCode == SQLiteError.constraintPrimaryKey {
                throw StoreError.recordExists(kind: .order, key: order.id)
            }
            try insertItems(of: order)
            return true
        }
    }

    /// Inserts the order with its items unless one with its id exists (then nothing changes);
    /// true if it was inserted.
    @discardableResult
    public func insertIfAbsent(_ order: Order) throws -> Bool {
        try order.validate()
        let statement = try db.cachedStatement(
            literal: "INSERT INTO orders (id, placed_at) VALUES (?, ?) ON CONFLICT (id) DO NOTHING")
        try statement.bind(order.id, at: 1)
        try statement.bind(try Self.storedTime(of: order), at: 2)
        return try db.recordingInsert(of: .order, key: order.id) {
            do {
                defer { statement.reset() }
                _ = try statement.step()
            }
            guard db.changes == 1 else { return false }
            try insertItems(of: order)
            return true
        }
    }

    /// Replaces an existing order and all its items; `StoreError.recordNotFound` if there is none.
    public func update(_ order: Order) throws {
        try order.validate()
        try db.execute(
            "UPDATE orders SET placed_at = ? WHERE id = ?",
            [.integer(try Self.storedTime(of: order)), .text(order.id)])
        guard db.changes == 1 else { throw StoreError.recordNotFound(kind: .order, key: order.id) }
        try db.execute("DELETE FROM order_items WHERE order_id = ?", [.text(order.id)])
        try insertItems(of: order)
    }

    /// Deletes the order and its items; false if there was none.
    @discardableResult
    public func delete(_ id: String) throws -> Bool {
        // order_items go with it: ON DELETE CASCADE.
        try db.execute("DELETE FROM orders WHERE id = ?", [.text(id)])
        guard db.changes == 1 else { return false }
        return true
    }

    private func insertItems(of order: Order) throws {
        let statement = try db.cachedStatement(
            literal:
                "INSERT INTO order_items (order_id, position, item_name, price_cents, aisle, quantity) VALUES (?, ?, ?, ?, ?, ?)")
        try statement.withText(order.id, at: 1) {
            for (position, item) in order.items.enumerated() {
                try statement.bind(Int64(position), at: 2)
                try statement.bind(Int64(item.aisle), at: 5)
                try statement.bind(item.price.minorUnits, at: 4)
                try statement.bind(Int64(item.quantity), at: 6)
                try statement.withText(item.itemName, at: 3) {
                    defer { statement.reset() }
                    _ = try statement.step()
                }
            }
        }
    }

    /// An item as stored; an amount out of bounds (only a write around the store can leave
    /// one) is an error naming the order and item, so nothing computes with it and traps.
    private static func decodeItem(
        _ row: Statement, from column: Int32, order id: String, index: Int, validating: Bool = true
    ) throws -> OrderItem {
        // Field names are built only for an error: a read of 100,000 orders built them per item.
        let item = OrderItem(
            itemName: row.text(column),
            price: Money(minorUnits: try storedInteger(row, column + 1, order: id, field: "items[\(index)].price")),
            aisle: Int(try storedInteger(row, column + 2, order: id, field: "items[\(index)].aisle")),
            quantity: Int(try storedInteger(row, column + 3, order: id, field: "items[\(index)].quantity")))
        guard validating else { return item }
        if let reason = item.amountProblem {
            throw StoreError.invalidRecord(kind: .order, key: id, field: "items[\(index)]", reason: reason + " (as stored)")
        }
        if item.aisle < 0 {
            throw StoreError.invalidRecord(
                kind: .order, key: id, field: "items[\(index)].aisle", reason: "\(item.aisle) is negative (as stored)")
        }
        return item
    }

    /// A stored integer column (a price, an aisle, a quantity): see `StoredValue`.
    private static func storedInteger(
        _ row: Statement, _ column: Int32, order id: String, field: @autoclosure () -> String
    ) throws -> Int64 {
        try StoredValue.integer(row, column, kind: .order, key: id, field: field())
    }

    /// `order.placedAt` in milliseconds, for a row; outside years 0001 to 9999 it is refused.
    private static func storedTime(of order: Order) throws -> Int64 {
        guard let milliseconds = Timestamp.checkedMilliseconds(order.placedAt) else {
            throw StoreError.invalidRecord(
                kind: .order, key: order.id, field: "placedAt", reason: "must lie in years 0001 to 9999")
        }
        return milliseconds
    }

    /// The order, once it holds what a write requires (see `Order.validate`) beyond what
    /// `decodeItem` checked of each item: at least one item, and the total within bounds.
    /// Written around the store, an order without items or with a negative aisle was read,
    /// exported and published as it was, and every client's sync then refused the feed.
    private static func checked(_ order: Order) throws -> Order {
        if order.items.isEmpty {
            throw StoreError.invalidRecord(
                kind: .order, key: order.id, field: "items", reason: "an order needs at least one item (as stored)")
        }
        if order.items.count > Order.maximumItems {
            throw StoreError.invalidRecord(
                kind: .order, key: order.id, field: "items",
                reason: "\(order.items.count) items are more than an order may hold (\(Order.maximumItems)) (as stored)")
        }
        _ = try order.total
        return order
    }
}

extension Database {
    /// The orders table (with order_items), on this connection.
    public var orders: OrderTable { OrderTable(db: self) }
}
