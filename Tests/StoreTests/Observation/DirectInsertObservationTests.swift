import Foundation
import StoreTestSupport
import Testing

@testable import Store

/// The store's own inserts (`insert`, `insertIfAbsent` of every kind) record their change
/// themselves, with the pre-update hook off while they step (`ChangeCollector.recordingInsert`),
/// unless the insert could change more than its own rows: then the hook sees them as it sees
/// raw SQL. Either way observers get the same changes.
@Suite("The store's own inserts, recorded without the hook", .timeLimit(.minutes(10)))
struct DirectInsertObservationTests {
    /// How many inserts so far recorded their own change on the writer's connection.
    static func directInserts(_ store: Store) async throws -> Int {
        try await store.write { db in db.changeCollector?.directInserts ?? 0 }
    }

    static let date = Fixtures.date("2026-11-25")
    static let event = Event(id: "e-1", title: "Review", date: date)

    @Test func everyKindsInsertReportsWhatTheHookWould() async throws {
        try await withTemporaryStore(configuration: Note.configuration) { store, _ throws in
            let changes = StreamProbe(await store.changesFromNow())
            let note = Note(id: "n-1", text: "Milk", pinned: false, due: Self.date)
            try await store.write { db in
                try db.frameworks.insert(Fixtures.framework("fw-1"))
                try db.frameworks.insertIfAbsent(Fixtures.framework("fw-2"))
                #expect(try !db.frameworks.insertIfAbsent(Fixtures.framework("fw-1")))
                try db.events.insert(Self.event)
                try db.orders.insert(Fixtures.order("o-1", prices: ["1.50", "2.25"]))
                try db.orders.insertIfAbsent(Fixtures.order("o-2", prices: ["3.00"]))
                try db.records(Note.self).insert(note)
                // Updated after its insert in the same write: still one insert.
                try db.frameworks.update(Fixtures.framework("fw-2", name: "Renamed"))
            }
            #expect(
                try await changes.next().changes == [
                    Change(kind: .framework, key: "fw-1", operation: .insert),
                    Change(kind: .framework, key: "fw-2", operation: .insert),
                    Change(kind: .event, key: "e-1", operation: .insert, dates: [Self.date]),
                    Change(kind: .order, key: "o-1", operation: .insert),
                    Change(kind: .order, key: "o-2", operation: .insert),
                    Change(kind: Note.kind, key: "n-1", operation: .insert),
                ])
            // Every one of them went the direct way: with the counting removed, or the direct
            // path never taken, this fails.
            #expect(try await Self.directInserts(store) == 6)
        }
    }

    @Test func aFailedInsertAndARolledBackOneReportNothing() async throws {
        try await withTemporaryStore { store, _ throws in
            let changes = StreamProbe(await store.changesFromNow())
            try await store.frameworks.insert(Fixtures.framework("taken"))
            #expect(try await changes.next().changes.map(\.key) == ["taken"])
            try await store.write { db in
                #expect(throws: StoreError.self) { try db.frameworks.insert(Fixtures.framework("taken")) }
                try db.execute("SAVEPOINT attempt")
                try db.frameworks.insert(Fixtures.framework("undone"))
                try db.events.insert(Self.event)
                try db.execute("ROLLBACK TO attempt")
                try db.execute("RELEASE attempt")
                try db.frameworks.insert(Fixtures.framework("kept"))
            }
            #expect(try await changes.next().changes == [Change(kind: .framework, key: "kept", operation: .insert)])
            #expect(try await changes.untakenAfterWaiting(0.3).isEmpty)
        }
    }

    @Test func aDeleteThenTheStoresInsertOfTheSameKeyIsAnUpdate() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.frameworks.insert(Fixtures.framework("again"))
            let changes = StreamProbe(await store.changesFromNow())
            try await store.write { db in
                try db.frameworks.delete("again")
                try db.frameworks.insert(Fixtures.framework("again", name: "Back"))
            }
            #expect(try await changes.next().changes == [Change(kind: .framework, key: "again", operation: .update)])
        }
    }

    /// A trigger on the kind's table can write other records: the hook must see those rows, so
    /// the insert goes through it. Made in an earlier write (found when the columns are
    /// resolved) and as a temporary trigger in the same write (seen by the authorizer).
    @Test func aTriggerOnTheTableSendsTheInsertThroughTheHook() async throws {
        try await withTemporaryStore { store, _ throws in
            try await store.write { db in
                try db.execute(
                    """
                    CREATE TRIGGER framework_makes_event AFTER INSERT ON frameworks BEGIN
                        INSERT INTO events (id, title, date) VALUES ('for-' || NEW.id, NEW.name, '2026-11-25');
                    END
                    """)
            }
            let before = try await Self.directInserts(store)
            let changes = StreamProbe(await store.changesFromNow())
            try await store.frameworks.insert(Fixtures.framework("fw-t", name: "Triggered"))
            #expect(
                try await changes.next().changes == [
                    Change(kind: .framework, key: "fw-t", operation: .insert),
                    Change(kind: .event, key: "for-fw-t", operation: .insert, dates: [Self.date]),
                ])
            // Events have no trigger: their inserts still record themselves.
            try await store.events.insert(Self.event)
            #expect(try await changes.next().changes.map(\.key) == ["e-1"])
            #expect(try await Self.directInserts(store) == before + 1)

            try await store.write { db in try db.execute("DROP TRIGGER framework_makes_event") }
            try await store.write { db in
                try db.frameworks.insert(Fixtures.framework("fw-before"))
                try db.execute(
                    """
                    CREATE TEMP TRIGGER event_makes_framework AFTER INSERT ON main.events BEGIN
                        INSERT INTO frameworks (id, name, image_name, url_string, description)
                        VALUES ('from-' || NEW.id, 'n', 'i', 'https://example.com/', 'd');
                    END
                    """)
                try db.events.insert(Event(id: "e-2", title: "Later", date: Self.date))
            }
            #expect(
                try await changes.next().changes == [
                    Change(kind: .framework, key: "fw-before", operation: .insert),
                    Change(kind: .event, key: "e-2", operation: .insert, dates: [Self.date]),
                    Change(kind: .framework, key: "from-e-2", operation: .insert),
                ])
            // The next write looks at the schema again and finds the temporary trigger.
            try await store.events.insert(Event(id: "e-3", title: "Next", date: Self.date))
            #expect(try await changes.next().changes.map(\.key) == ["e-3", "from-e-3"])
        }
    }

    /// A registered kind's table whose key replaces on conflict: inserting an existing key
    /// deletes the old row first, which the hook reports as an update; and a key column of
    /// INTEGER affinity stores `007` as 7, which the hook reports as stored.
    @Test func aReplacingOrNumericKeyGoesThroughTheHook() async throws {
        let replacing = Note.configuration(
            creatingTableWith: """
                CREATE TABLE notes (
                    id     TEXT PRIMARY KEY ON CONFLICT REPLACE NOT NULL,
                    text   TEXT NOT NULL,
                    pinned INTEGER NOT NULL,
                    due    TEXT NOT NULL
                );
                """)
        try await withTemporaryStore(configuration: replacing) { store, _ throws in
            let changes = StreamProbe(await store.changesFromNow())
            try await store.write { db in
                try db.records(Note.self).insert(Note(id: "n", text: "One", pinned: false, due: Self.date))
            }
            #expect(try await changes.next().changes == [Change(kind: Note.kind, key: "n", operation: .insert)])
            try await store.write { db in
                try db.records(Note.self).insert(Note(id: "n", text: "Two", pinned: true, due: Self.date))
            }
            #expect(try await changes.next().changes == [Change(kind: Note.kind, key: "n", operation: .update)])
            #expect(try await Self.directInserts(store) == 0)
        }
        // A key column of INTEGER affinity that is not the rowid stores `007` as 7, which the
        // hook reports as stored. (`INTEGER PRIMARY KEY`, the rowid, is refused at open.)
        let numeric = Note.configuration(
            creatingTableWith: "CREATE TABLE notes (id INT PRIMARY KEY, text TEXT, pinned INTEGER, due TEXT);")
        try await withTemporaryStore(configuration: numeric) { store, _ throws in
            let changes = StreamProbe(await store.changesFromNow())
            try await store.write { db in
                try db.records(Note.self).insert(Note(id: "007", text: "Bond", pinned: false, due: Self.date))
            }
            #expect(try await changes.next().changes == [Change(kind: Note.kind, key: "7", operation: .insert)])
            #expect(try await Self.directInserts(store) == 0)
        }
    }

    @Test func declaredTypesKeepTextAsSQLiteSays() {
        for type in ["TEXT", "varchar(20)", "CLOB", "", "BLOB", "NATIVE CHARACTER(70)"] {
            #expect(ChangeCollector.keepsTextAsIs(declaredType: type), "\(type)")
        }
        for type in ["INTEGER", "int", "BIGINT", "REAL", "NUMERIC", "DECIMAL(10,5)", "BOOLEAN", "DATE", "CHARINT"] {
            #expect(!ChangeCollector.keepsTextAsIs(declaredType: type), "\(type)")
        }
    }
}
