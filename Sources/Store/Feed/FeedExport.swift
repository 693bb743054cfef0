import Foundation

extension Store {
    /// The whole store as one version-1 feed (FEED.md), read in one snapshot, records ordered
    /// by key. With `includingImageData: false`, images carry only their url and content type.
    public func exportFeed(includingImageData: Bool = true) async throws -> String {
        let budget = configuration.imageCacheBudget
        let document = try await read { db -> JSONValue in
            let images = try db.images(budget: budget, now: Date()).fetchAll()
            let orders = try db.orders.fetchAll()
            let events = try db.events.fetchAll().sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
            return .object([
                "version": .integer(1),
                "frameworks": .array(try db.frameworks.fetchAll().map(\.jsonValue)),
                "orders": .array(orders.map { $0.jsonValue() }),
                "events": .array(events.map(\.jsonValue)),
                "images": .array(images.map { $0.jsonValue(includingData: includingImageData) }),
            ])
        }
        return JSONWriter(pretty: true).string(document) + "\n"
    }
}
