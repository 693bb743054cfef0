import Foundation
import Testing

@testable import Store

/// Sync tells a changed record from an unchanged one by its fields (an image by its bytes), not
/// by its 64-bit record hash: two records with the same hash are cheap to find.
@Suite(.timeLimit(.minutes(10)))
struct OrderSyncComparisonTests {
    /// Two feeds of one order `o` whose FNV-1a record hashes collide (found by a birthday search
    /// over the aisle): priced 999.99, then 1.00.
    static let first = """
        {"version":1,"orders":[{"id":"o","placedAt":"2026-01-01T00:00:00Z","items":[{"itemName":"a","price":999.99,"aisle":6661983456350088886,"quantity":1}]}]}
        """
    static let second = """
        {"version":1,"orders":[{"id":"o","placedAt":"2026-01-01T00:00:00Z","items":[{"itemName":"a","price":1.00,"aisle":7931675975634037676,"quantity":1}]}]}
        """

    @Test func theTwoOrdersDifferButTheirHashesCollide() throws {
        let a = try #require(try Feed.decode(Data(Self.first.utf8)).orders.first)
        let b = try #require(try Feed.decode(Data(Self.second.utf8)).orders.first)
        #expect(a != b)
        #expect(RecordHash.of(a) == RecordHash.of(b))
        #expect(!OrderTable.isSame(a, b))
        #expect(OrderTable.isSame(a, a))
    }

    @Test func preferRemoteUpdatesAnOrderWhoseHashCollides() async throws {
        try await withBehaviourStore { store, folder in
            var options = SyncOptions(policy: .preferRemote)
            options.force = true
            let source = try folder.write("feed.json", Self.first)
            #expect(try await store.sync(from: source, options: options)[.order] == counts(inserted: 1))
            #expect(try await store.orders.total("o") == Money("999.99"))

            try folder.write("feed.json", Self.second)
            let report = try await store.sync(from: source, options: options)
            #expect(report[.order] == counts(updated: 1))
            #expect(try await store.orders.total("o") == Money("1.00"))
            #expect(try await store.orders.find("o")?.items.first?.aisle == 7_931_675_975_634_037_676)
        }
    }

    @Test func keepExistingKeepsAnOrderWhoseHashCollides() async throws {
        try await withBehaviourStore { store, folder in
            var options = SyncOptions(policy: .keepExisting)
            options.force = true
            let source = try folder.write("feed.json", Self.first)
            _ = try await store.sync(from: source, options: options)
            try folder.write("feed.json", Self.second)
            // Kept (it differs), not unchanged.
            #expect(try await store.sync(from: source, options: options)[.order] == counts(kept: 1))
            #expect(try await store.orders.total("o") == Money("999.99"))
        }
    }

    /// Three-way: the local order is the one received (not edited), so the feed's change is
    /// taken; by hash the two were "unchanged" and the feed's price was dropped.
    @Test func threeWayTakesAChangeWhoseHashCollides() async throws {
        try await withBehaviourStore { store, folder in
            var options = SyncOptions(policy: .threeWay)
            options.force = true
            let source = try folder.write("feed.json", Self.first)
            _ = try await store.sync(from: source, options: options)
            try folder.write("feed.json", Self.second)
            #expect(try await store.sync(from: source, options: options)[.order] == counts(updated: 1))
            #expect(try await store.orders.total("o") == Money("1.00"))
        }
    }

    /// Two 16-byte images whose FNV-1a record hashes (no content type) collide.
    static let firstImage = Data(base64Encoded: "ZAAAAAAAAAAO8YRrP7sCaw==")!
    static let secondImage = Data(base64Encoded: "n4YBAAAAAAD7nQKgtftpRg==")!

    /// Prefer-remote replaces a cached image whose bytes differ from the feed's, although their
    /// hashes match: by hash it was counted already cached and the old bytes stayed.
    @Test func preferRemoteReplacesAnImageWhoseHashCollides() async throws {
        #expect(Self.firstImage != Self.secondImage)
        #expect(
            RecordHash.of(image: Self.firstImage, contentType: nil) == RecordHash.of(image: Self.secondImage, contentType: nil))
        try await withBehaviourStore { store, folder in
            let options = SyncOptions(policy: .preferRemote)
            let url = "https://example.com/a.png"
            let source = try folder.write("feed.json", behaviourFeed(images: [imageJSON(url, data: Self.firstImage)]))
            #expect(try await store.sync(from: source, options: options).images.stored == 1)
            try folder.write("feed.json", behaviourFeed(images: [imageJSON(url, data: Self.secondImage)]))
            #expect(try await store.sync(from: source, options: options).images.stored == 1)
            #expect(try await store.images.get(url)?.data == Self.secondImage)
        }
    }
}
