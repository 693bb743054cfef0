-- sync_records for every record kind, the app's own included (Store.Configuration.recordTypes):
-- the kind rule no longer lists the four built-in kinds, it only refuses an empty kind (the
-- store checks registered kinds' names before any is written: lowercase letters, digits, _).
--
-- Rebuilt the way https://sqlite.org/lang_altertable.html describes (create, copy, drop,
-- rename), as 0007 did; sync_records refers to sync_sources and nothing refers to it, so
-- dropping it and renaming the copy leaves every foreign key as it was.
CREATE TABLE sync_records_new (
    source_id INTEGER NOT NULL REFERENCES sync_sources(id) ON DELETE CASCADE,
    kind      TEXT NOT NULL CHECK (kind <> ''),
    key       TEXT NOT NULL,
    hash      INTEGER NOT NULL, -- 64-bit FNV-1a of the record's fields (RecordHash)
    PRIMARY KEY (source_id, kind, key)
) WITHOUT ROWID;
INSERT INTO sync_records_new (source_id, kind, key, hash) SELECT source_id, kind, key, hash FROM sync_records;
DROP TABLE sync_records;
ALTER TABLE sync_records_new RENAME TO sync_records;
