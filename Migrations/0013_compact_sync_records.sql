-- sync_records keyed by a small integer per (source, kind), a "stream", instead of the source's
-- id and the kind's name repeated in every row.
--
-- Every record a sync inserts gets a received-hash row, so this table grows with the store: in
-- a profile of a 100,000-framework sync it was 4.0 MB of a 31.5 MB store (the sqlite3 CLI's
-- import of the same records writes 26.2 MB), each row carrying 'framework' (9 bytes) and the
-- source id before its key, and every insert or lookup compared the kind's text. A stream id
-- below 2 takes no byte in a record (serial types 8 and 9, https://sqlite.org/fileformat2.html),
-- and the rows are about 30% smaller: the same 100,000 rows take 2.9 MB (702 pages, not 983).
--
-- Rebuilt the way https://sqlite.org/lang_altertable.html describes (create, copy, drop,
-- rename), as 0007, 0008 and 0012 did; every received hash is carried over. Deleting a source
-- still forgets what it received: sync_streams rows go by their foreign key's cascade, and
-- their sync_records rows by a trigger. sync_records declares no foreign key: with
-- foreign_keys on, SQLite looks the parent up for every row inserted (77 ns a row in a
-- 1,000,000-row test, a third more than the insert itself), and sync writes a row per record;
-- only the store writes these rows, always for a stream it has just read or made.
CREATE TABLE sync_streams (
    id        INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES sync_sources(id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (kind <> ''),
    UNIQUE (source_id, kind)
);
INSERT INTO sync_streams (source_id, kind) SELECT DISTINCT source_id, kind FROM sync_records ORDER BY 1, 2;

CREATE TABLE sync_records_new (
    stream INTEGER NOT NULL, -- sync_streams(id)
    key    TEXT NOT NULL,
    hash   INTEGER NOT NULL, -- 64-bit FNV-1a of the record's fields (RecordHash)
    PRIMARY KEY (stream, key)
) WITHOUT ROWID;
INSERT INTO sync_records_new (stream, key, hash)
    SELECT s.id, r.key, r.hash FROM sync_records AS r JOIN sync_streams AS s ON s.source_id = r.source_id AND s.kind = r.kind;
DROP TABLE sync_records;
ALTER TABLE sync_records_new RENAME TO sync_records;

CREATE TRIGGER sync_streams_forget AFTER DELETE ON sync_streams BEGIN
    DELETE FROM sync_records WHERE stream = old.id;
END;
