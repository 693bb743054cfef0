-- sync_records again, with its kind rule written as comparisons instead of an IN list.
--
-- SQLite evaluates `kind IN ('framework', 'order', 'event', 'image')` in a CHECK constraint by
-- building a temporary index of the four strings each time an INSERT statement runs, and sync
-- runs one per record: in a profile of a 100,000-record sync, that upsert took 39% of the whole
-- process, more than inserting the records themselves. The same rule as comparisons costs a
-- few instructions. The table is rebuilt the way https://sqlite.org/lang_altertable.html
-- describes (create, copy, drop, rename); nothing refers to sync_records, so no foreign key
-- is affected.
CREATE TABLE sync_records_new (
    source TEXT NOT NULL REFERENCES sync_sources(source) ON DELETE CASCADE,
    kind   TEXT NOT NULL CHECK (kind = 'framework' OR kind = 'order' OR kind = 'event' OR kind = 'image'),
    key    TEXT NOT NULL,
    hash   INTEGER NOT NULL, -- 64-bit FNV-1a of the record's fields (RecordHash)
    PRIMARY KEY (source, kind, key)
) WITHOUT ROWID;

INSERT INTO sync_records_new (source, kind, key, hash) SELECT source, kind, key, hash FROM sync_records;
DROP TABLE sync_records;
ALTER TABLE sync_records_new RENAME TO sync_records;
