import Foundation

extension Store {
    /// The whole store as one version-1 feed (<doc:FeedFormat>), read in one snapshot, records ordered
    /// by key. With `includingImageData: false`, images carry only their url and content type.
    /// The same store always gives the same bytes.
    public func exportFeed(includingImageData: Bool = true) async throws -> String {
        try await exportFeedPages(pageSize: nil, includingImageData: includingImageData)[0].text
    }

    /// The whole store as feed pages of at most `pageSize` records each (all in one page when
    /// nil), linked by `next`: page 1 is `firstPageName`, page n is `feed-n.json` beside it.
    /// Serve the folder from any static HTTP server; clients revalidate with ETags.
    public func exportFeedPages(
        pageSize: Int?, includingImageData: Bool = true, firstPageName: String = "feed.json"
    ) async throws -> [FeedPageFile] {
        precondition(pageSize.map { $0 > 0 } ?? true, "pageSize must be positive")
        let budget = configuration.imageCacheBudget
        let recordTypes = configuration.recordTypes
        let records = try await read { db -> [(RecordKind, JSONValue)] in
            let frameworks = try db.frameworks.fetchAll().map { (RecordKind.framework, $0.jsonValue) }
            let orders = try db.orders.fetchAll().map { (RecordKind.order, $0.jsonValue()) }
            let events = try db.events.fetchAll().sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
                .map { (RecordKind.event, $0.jsonValue) }
            let images = try db.images(budget: budget, now: Date()).fetchAll()
                .map { (RecordKind.image, $0.jsonValue(includingData: includingImageData)) }
            // Each app kind by its own encoder, in the order registered.
            let appRecords = try recordTypes.flatMap { type in try Self.exportedRecords(of: type, from: db) }
            return frameworks + orders + events + images + appRecords
        }
        let size = pageSize ?? max(records.count, 1)
        let chunks = records.isEmpty ? [[]] : stride(from: 0, to: records.count, by: size).map {
            Array(records[$0..<min($0 + size, records.count)])
        }
        let writer = JSONWriter(pretty: true)
        return chunks.enumerated().map { index, chunk in
            var members = [JSONMember("version", .integer(1))]
            for kind in RecordKind.allCases + recordTypes.map({ $0.kind }) {
                members.append(JSONMember(kind.plural, .array(chunk.filter { $0.0 == kind }.map(\.1))))
            }
            if index + 1 < chunks.count { members.append(JSONMember("next", .string(Self.pageName(index + 2, first: firstPageName)))) }
            return FeedPageFile(name: Self.pageName(index + 1, first: firstPageName), text: writer.string(.object(members)) + "\n")
        }
    }

    /// A kind's records in the feed's shape, ordered by key.
    private static func exportedRecords<Record: StoreRecord>(of type: Record.Type, from db: Database) throws -> [(RecordKind, JSONValue)] {
        try db.records(type).fetchAll().map { (Record.kind, $0.feedValue) }
    }

    static func pageName(_ number: Int, first: String) -> String {
        number == 1 ? first : "feed-\(number).json"
    }
}

/// One page of an exported feed: its file name and its text.
public struct FeedPageFile: Sendable, Equatable {
    public let name: String
    public let text: String
}
