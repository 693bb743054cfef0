import Foundation
import Testing

@testable import Store

@Suite("Orders in a file store")
struct OrderStoreTests {
    private func itemRowCount(_ store: Store, order id: String? = nil) async throws -> Int64? {
        try await store.read { db in
            if let id { return try db.integer("SELECT count(*) FROM order_items WHERE order_id = ?", [.text(id)]) }
            return try db.fetchAll("SELECT count(*) FROM order_items").first?[0].integerValue
        }
    }

    @Test func insertsAndFindsAnOrderWithItsItemsInOrder() async throws {
        try await withTemporaryStore { store, _ throws in
            let order = Order(
                id: "o-1001", placedAt: Fixtures.time("2026-11-20T09:30:00.250Z"),
                items: [
                    OrderItem(itemName: "Milk", price: Fixtures.money("2.49"), aisle: 3, quantity: 2),
                    OrderItem(itemName: "Apples", price: Fixtures.money("0.5"), aisle: 1),
                    OrderItem(itemName: "Bread", price: Fixtures.money("3"), aisle: 7, quantity: 1),
                ])
            try await store.orders.insert(order)
            let found = try #require(try await store.orders.find("o-1001"))
            #expect(found == order)
            #expect(found.items.map(\.itemName) == ["Milk", "Apples", "Bread"])
            #expect(try await store.orders.find("o-404") == nil)
            #expect(try await store.orders.count() == 1)
        }
    }

    @Test func totalsPointOneAndPointTwoToExactlyPointThree() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.orders.insert(Fixtures.order("o-1", prices: ["0.10", "0.20"]))
            let total = try #require(try await store.orders.total("o-1"))
            #expect(total == Money("0.30"))
            #expect(total.description == "0.30")
            #expect(try await store.orders.find("o-1")?.total == total)
            #expect(try await store.orders.total("o-404") == nil)
        }
    }

    @Test func totalCountsEachItemsQuantity() async throws {
        try await withTemporaryStore { store, _ throws in
            let order = Order(
                id: "o-2", placedAt: Fixtures.time("2026-01-01T00:00:00Z"),
                items: [
                    OrderItem(itemName: "Milk", price: Fixtures.money("2.49"), aisle: 3, quantity: 2),
                    OrderItem(itemName: "Gum", price: Fixtures.money("0.1"), aisle: 0, quantity: 7),
                ])
            try await store.orders.insert(order)
            let expected = Money(minorUnits: 249 * 2 + 10 * 7)
            #expect(try await store.orders.total("o-2") == expected)
            #expect(try order.total == expected)
        }
    }

    @Test func keepsPlacedAtToTheMillisecond() async throws {
        try await withTemporaryStore { store, _ throws in
            let placedAt = Fixtures.time("2026-11-20T09:30:00.123Z")
            var order = Fixtures.order("o-3", prices: ["1"])
            order.placedAt = placedAt.addingTimeInterval(0.0004) // finer than the store keeps
            try await store.orders.insert(order)
            #expect(try await store.orders.find("o-3")?.placedAt == placedAt)
        }
    }

    @Test func fetchesAllOrdersWithTheirOwnItems() async throws {
        try await withTemporaryStore { store, _ throws in
            let orders = [
                Fixtures.order("o-b", prices: ["1", "2"]), Fixtures.order("o-a", prices: ["3"]),
                Fixtures.order("o-c", prices: ["4", "5", "6"]),
            ]
            for order in orders { try await store.orders.insert(order) }
            #expect(try await store.orders.fetchAll() == orders.sorted { $0.id < $1.id })
        }
    }

    /// `fetchAll` walks orders and items in id order side by side: ids that share prefixes or
    /// sort past ASCII, and items left behind by another program (foreign keys off) whose order
    /// does not exist, before, between and after the real ones, still give each order exactly
    /// its own items, as `find` does.
    @Test func fetchAllMatchesItemsToOrdersByIdAndSkipsItemsWithoutAnOrder() async throws {
        try await withTemporaryStore { store, directory throws in
            let ids = ["a", "a b", "a-1", "ab", "b", "é", "z"]
            let orders = ids.enumerated().map { index, id in
                Fixtures.order(id, prices: (0...index % 3).map { String($0 + 1) })
            }
            for order in orders.reversed() { try await store.orders.insert(order) }
            let other = try Database(path: directory.databasePath, options: .init())
            try other.execute("PRAGMA foreign_keys = OFF")
            for orphan in ["", "0", "a a", "aa", "c", "zz", "éé"] {
                try other.execute(
                    """
                    INSERT INTO order_items (order_id, position, item_name, price_cents, aisle, quantity)
                    VALUES (?, 0, 'Left behind', 1, 1, 1)
                    """,
                    [.text(orphan)])
            }
            other.close()
            let fetched = try await store.orders.fetchAll()
            #expect(fetched == orders.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) })
            for order in fetched { #expect(try await store.orders.find(order.id) == order) }
        }
    }

    @Test func refusesToInsertAnIDThatIsTakenAndKeepsTheFirstOrdersItems() async throws {
        try await withTemporaryStore { store, _ throws in
            let first = Fixtures.order("o-1", prices: ["1.00"])
            try await store.orders.insert(first)
            await #expect(throws: StoreError.recordExists(kind: .order, key: "o-1")) {
                try await store.orders.insert(Fixtures.order("o-1", prices: ["9", "9"]))
            }
            #expect(try await store.orders.find("o-1") == first)
            #expect(try await itemRowCount(store) == 1)
        }
    }

    @Test func updateReplacesTheItems() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.orders.insert(Fixtures.order("o-1", prices: ["1", "2", "3"]))
            let replacement = Fixtures.order("o-1", placedAt: "2026-12-24T18:00:00Z", prices: ["0.99"])
            try await store.orders.update(replacement)
            #expect(try await store.orders.find("o-1") == replacement)
            #expect(try await itemRowCount(store) == 1)
            #expect(try await store.orders.total("o-1") == Money("0.99"))
        }
    }

    @Test func refusesToUpdateAnOrderThatDoesNotExist() async throws {
        try await withTemporaryStore { store, _ throws in
            await #expect(throws: StoreError.recordNotFound(kind: .order, key: "o-404")) {
                try await store.orders.update(Fixtures.order("o-404", prices: ["1"]))
            }
            #expect(try await itemRowCount(store) == 0)
        }
    }

    @Test func deletingAnOrderDeletesItsItems() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.orders.insert(Fixtures.order("o-1", prices: ["1", "2", "3"]))
            try await store.orders.insert(Fixtures.order("o-2", prices: ["4", "5"]))
            #expect(try await itemRowCount(store) == 5)
            #expect(try await store.orders.delete("o-1"))
            #expect(try await itemRowCount(store, order: "o-1") == 0)
            #expect(try await itemRowCount(store) == 2)
            #expect(try await !store.orders.delete("o-1"))
            #expect(try await store.orders.count() == 1)
        }
    }

    @Test func refusesAnOrderWithoutItemsOrWithAnImpossibleItem() async throws {
        try await withTemporaryStore { store, _ throws in
            let empty = Order(id: "o-empty", placedAt: Fixtures.time("2026-01-01T00:00:00Z"), items: [])
            await #expect(
                throws: StoreError.invalidRecord(
                    kind: .order, key: "o-empty", field: "items", reason: "an order needs at least one item")
            ) {
                try await store.orders.insert(empty)
            }
            var zeroQuantity = Fixtures.order("o-zero", prices: ["1"])
            zeroQuantity.items[0].quantity = 0
            let error = await #expect(throws: StoreError.self) { try await store.orders.insert(zeroQuantity) }
            if case .invalidRecord(.order, "o-zero", let field, _) = error {
                #expect(field == "items[0].quantity")
            } else {
                Issue.record("expected invalidRecord, got \(String(describing: error))")
            }
            #expect(try await store.orders.count() == 0)
        }
    }

    /// At most `Order.maximumItems` items: a write of more is refused, and an order grown past
    /// it around the store is an error when read (so no export or publish writes a record every
    /// client would refuse: a feed record holds at most a million JSON values).
    @Test func anOrderHoldsAtMostMaximumItems() async throws {
        try await withTemporaryStore { store, _ throws in
            let item = OrderItem(itemName: "Milk", price: Money(minorUnits: 1), aisle: 1)
            let full = Order(
                id: "o-full", placedAt: Fixtures.time("2026-01-01T00:00:00Z"),
                items: Array(repeating: item, count: Order.maximumItems))
            try await store.orders.insert(full)
            var over = full
            over.id = "o-over"
            over.items.append(item)
            let reason = "100001 items are more than an order may hold (100000)"
            await #expect(throws: StoreError.invalidRecord(kind: .order, key: "o-over", field: "items", reason: reason)) {
                try await store.orders.insert(over)
            }
            over.id = "o-full"
            await #expect(throws: StoreError.invalidRecord(kind: .order, key: "o-full", field: "items", reason: reason)) {
                try await store.orders.update(over)
            }
            #expect(try await store.orders.find("o-full")?.items.count == Order.maximumItems)
            #expect(try await store.orders.count() == 1)

            try await store.write { db in
                try db.execute(
                    "INSERT INTO order_items (order_id, position, item_name, price_cents, aisle, quantity) VALUES ('o-full', 100000, 'x', 1, 1, 1)"
                )
            }
            await #expect(
                throws: StoreError.invalidRecord(kind: .order, key: "o-full", field: "items", reason: reason + " (as stored)")
            ) {
                _ = try await store.orders.find("o-full")
            }
        }
    }

    /// An item checked alone does not know its order: its error used to give the item's name as
    /// the order's key (`order 'Milk': subtotal: ...`). The order's total names both.
    @Test("an item's subtotal error names the item, not as the order's key; the total names the order and index")
    func subtotalErrorsNameTheItem() throws {
        let item = OrderItem(itemName: "Milk", price: Money(minorUnits: 120), aisle: 1, quantity: 0)
        #expect(
            throws: StoreError.invalidRecord(kind: .order, key: "", field: "item 'Milk'", reason: "quantity 0 is less than 1")
        ) {
            try item.subtotal
        }
        do {
            _ = try item.subtotal
        } catch {
            #expect("\(error)" == "order: item 'Milk': quantity 0 is less than 1")
        }
        let order = Order(id: "o-9", placedAt: Date(timeIntervalSince1970: 0), items: [item])
        do {
            _ = try order.total
            Issue.record("the total of an order with a bad item was computed")
        } catch {
            #expect("\(error)" == "order 'o-9': items[0]: quantity 0 is less than 1")
        }
    }
}
