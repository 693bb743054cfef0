import Foundation
import Testing

@testable import Store

/// Migration 0009 (validators per page, the policy per source): a source synced by an older
/// build keeps its id and what it received, but not its first page's validators alone, which
/// would answer 304 for a paged feed whose later page changed: its next sync fetches every page.
@Suite("Migration 0009")
struct SyncPagesMigrationTests {
    @Test func anOldSourceKeepsWhatItReceivedButNotItsFirstPagesValidators() async throws {
        try await withTemporaryDirectory { directory throws in
            var configuration = Store.Configuration()
            configuration.clock = .fixed(Fixtures.time("2026-03-01T12:00:00Z"))
            let index = try #require(Migration.embedded.firstIndex { $0.name == "revalidate_every_page" })
            configuration.migrations = Array(Migration.embedded[..<index])
            let source = "https://feeds.example.com/feed.json"
            try await withStore(at: directory.databasePath, configuration: configuration) { store throws in
                try await store.write { db in
                    try db.execute(
                        "INSERT INTO sync_sources (source, etag, last_modified, last_synced_at) VALUES (?, '\"v1\"', 'Sun, 01 Mar 2026 00:00:00 GMT', '2026-03-01T00:00:00Z')",
                        [.text(source)])
                    try db.execute("INSERT INTO sync_records SELECT id, 'framework', 'a', 42 FROM sync_sources")
                }
            }

            configuration.migrations = Migration.embedded
            try await withStore(at: directory.databasePath, configuration: configuration) { store throws in
                let state = try await store.read { try SyncStateTable(db: $0).state(for: source) }
                #expect(state == SourceState(pages: [], policy: nil))
                #expect(try await store.read { try $0.query("SELECT count(*) FROM sync_records") { $0.int(0) } } == [1])
                let columns = try await store.read {
                    try $0.query("SELECT name FROM pragma_table_info('sync_sources') ORDER BY cid") { $0.text(0) }
                }
                // 0010 adds the cursor, 0014 the kinds and whether the cursor is suspect.
                #expect(
                    columns == [
                        "id", "source", "last_synced_at", "policy", "cursor_generation", "cursor_sequence", "kinds",
                        "cursor_suspect",
                    ])

                // Saving pages and a policy, then reading them back; forgetting the source forgets its pages.
                let pages = [
                    PageValidators(url: source, etag: "\"v2\"", lastModified: nil),
                    PageValidators(
                        url: "https://feeds.example.com/feed-2.json", etag: nil, lastModified: "Mon, 02 Mar 2026 00:00:00 GMT"),
                ]
                try await store.write {
                    _ = try SyncStateTable(db: $0).saveSource(source, pages: pages, policy: .threeWay, syncedAt: Date())
                }
                #expect(
                    try await store.read { try SyncStateTable(db: $0).state(for: source) }
                        == SourceState(pages: pages, policy: .threeWay))
                try await store.write {
                    _ = try SyncStateTable(db: $0).saveSource(source, pages: nil, policy: nil, syncedAt: Date())
                }
                #expect(
                    try await store.read { try SyncStateTable(db: $0).state(for: source) }
                        == SourceState(pages: pages, policy: .threeWay))
                try await store.write { try $0.execute("DELETE FROM sync_sources") }
                #expect(try await store.read { try $0.query("SELECT count(*) FROM sync_pages") { $0.int(0) } } == [0])
            }
        }
    }
}
