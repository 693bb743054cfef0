import Foundation
import Testing

@testable import Store

/// What a sync says about a price it refuses: short, whatever the price's text.
@Suite(.timeLimit(.minutes(10)))
struct PriceProblemBehaviourTests {
    private static func feed(price: String) -> String {
        #"{"version":1,"orders":[{"id":"o","placedAt":"2026-01-01T00:00:00Z","items":[{"itemName":"a","price":"#
            + price + #","aisle":1}]}]}"#
    }

    /// A 1 MB price was echoed whole: to the caller's error, to stderr and into the sync
    /// history. It is clipped as the other fields' numbers are.
    @Test func aMegabytePriceIsClippedInTheErrorAndTheHistory() async throws {
        try await withBehaviourStore { store, folder in
            // 0.111...: more than two fraction digits, 1 MB of them.
            let price = "0." + String(repeating: "1", count: 1_000_000)
            let source = try folder.write("feed.json", Self.feed(price: price))
            let error = try #require(await behaviourError { try await store.sync(from: source) })
            let message = String(describing: error)
            #expect(message.contains("orders[0].items[0].price: 0.111"), "\(message.prefix(500))")
            #expect(message.contains("is not an amount of money"), "\(message.prefix(500))")
            #expect(message.utf8.count < 1_000, "\(message.utf8.count) bytes")

            let history = try await store.syncHistory(limit: 1)
            let stored = try #require(history.first?.error)
            #expect(history.first?.outcome == .failed)
            #expect(stored.contains("is not an amount of money"))
            #expect(stored.utf8.count < 1_000, "\(stored.utf8.count) bytes")
            #expect(try await store.orders.count() == 0)
        }
    }
}
