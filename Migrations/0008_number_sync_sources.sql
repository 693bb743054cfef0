-- Sync sources get an integer id, and sync_records refers to a source by that id instead of
-- repeating its text.
--
-- Every row of sync_records carried its source's full URL or absolute path, and the source
-- was the first column of the primary key: each insert and lookup compared it byte by byte
-- (memcmp was the largest SQLite cost after the VM itself in a profile of a 100,000-record
-- sync), and the rows were twice the size they needed to be. An integer compares in one step.
--
-- Both tables are rebuilt the way https://sqlite.org/lang_altertable.html describes (create,
-- copy, drop, rename). The old sync_records is dropped before the old sync_sources, so no
-- foreign key ever points at a table being dropped; renaming sync_sources_new updates the
-- reference in sync_records_new ("FOREIGN KEY constraints are always converted when a table
-- is renamed", since SQLite 3.26.0).
CREATE TABLE sync_sources_new (
    id             INTEGER PRIMARY KEY,
    source         TEXT NOT NULL UNIQUE, -- a feed URL, or a file's absolute path
    etag           TEXT,                 -- sent back as If-None-Match
    last_modified  TEXT,                 -- sent back as If-Modified-Since
    last_synced_at TEXT                  -- RFC 3339, UTC
);
INSERT INTO sync_sources_new (source, etag, last_modified, last_synced_at)
    SELECT source, etag, last_modified, last_synced_at FROM sync_sources ORDER BY rowid;

CREATE TABLE sync_records_new (
    source_id INTEGER NOT NULL REFERENCES sync_sources_new(id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (kind = 'framework' OR kind = 'order' OR kind = 'event' OR kind = 'image'),
    key       TEXT NOT NULL,
    hash      INTEGER NOT NULL, -- 64-bit FNV-1a of the record's fields (RecordHash)
    PRIMARY KEY (source_id, kind, key)
) WITHOUT ROWID;
INSERT INTO sync_records_new (source_id, kind, key, hash)
    SELECT s.id, r.kind, r.key, r.hash FROM sync_records AS r JOIN sync_sources_new AS s ON s.source = r.source;

DROP TABLE sync_records;
DROP TABLE sync_sources;
ALTER TABLE sync_sources_new RENAME TO sync_sources;
ALTER TABLE sync_records_new RENAME TO sync_records;
