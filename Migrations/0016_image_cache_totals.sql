-- The image cache's entry count and bytes, kept by triggers as entries come and go, so that
-- storing an image checks the budget without summing every entry. Each download is stored by a
-- write of its own, and each summed the whole cache: a local feed of 1,000, 4,000 and 16,000
-- image files took 0.53, 2.46 and 23 s to sync (debug storectl), n²/2 index entries read.
--
-- A size the store could not have written (changed around it: not an integer, negative, or past
-- 2^31 - 1, SQLite's ceiling for one value) counts as 0 bytes here, so no write fails on it;
-- the reads that meet it name the entry (ImageTable).
--
-- A total that is not a count (changed around the store: text, which SQLite's `+` reads as 0,
-- a real, a negative number, one past 2^62) becomes -1, and the store counts the entries again
-- when it reads one.
--
-- Not kept: rows that an `INSERT OR REPLACE` (or `UPDATE OR REPLACE`) deletes to make room, for
-- "when the REPLACE conflict resolution strategy deletes rows in order to satisfy a constraint,
-- delete triggers fire if and only if recursive triggers are enabled"
-- (https://sqlite.org/lang_conflict.html). The store's own writes use upserts; after raw SQL
-- that replaces, the totals are too high until eviction recounts them (ImageTable).
CREATE TABLE image_cache_totals (
    id      INTEGER PRIMARY KEY CHECK (id = 0),
    entries INTEGER NOT NULL,
    bytes   INTEGER NOT NULL
);

INSERT INTO image_cache_totals (id, entries, bytes)
    SELECT 0, count(*),
           coalesce(sum(CASE WHEN typeof(size) = 'integer' AND size BETWEEN 0 AND 2147483647 THEN size END), 0)
    FROM images;

CREATE TRIGGER image_cache_totals_after_insert AFTER INSERT ON images BEGIN
    UPDATE image_cache_totals SET
        entries = CASE WHEN typeof(entries) = 'integer' AND entries BETWEEN 0 AND 4611686018427387904 THEN entries + 1 ELSE -1 END,
        bytes = CASE WHEN typeof(bytes) = 'integer' AND bytes BETWEEN 0 AND 4611686018427387904
            THEN bytes + CASE WHEN typeof(NEW.size) = 'integer' AND NEW.size BETWEEN 0 AND 2147483647 THEN NEW.size ELSE 0 END ELSE -1 END
    WHERE id = 0;
END;

CREATE TRIGGER image_cache_totals_after_delete AFTER DELETE ON images BEGIN
    UPDATE image_cache_totals SET
        entries = CASE WHEN typeof(entries) = 'integer' AND entries BETWEEN 0 AND 4611686018427387904 THEN entries - 1 ELSE -1 END,
        bytes = CASE WHEN typeof(bytes) = 'integer' AND bytes BETWEEN 0 AND 4611686018427387904
            THEN bytes - CASE WHEN typeof(OLD.size) = 'integer' AND OLD.size BETWEEN 0 AND 2147483647 THEN OLD.size ELSE 0 END ELSE -1 END
    WHERE id = 0;
END;

CREATE TRIGGER image_cache_totals_after_update AFTER UPDATE OF size ON images BEGIN
    UPDATE image_cache_totals SET
        bytes = CASE WHEN typeof(bytes) = 'integer' AND bytes BETWEEN 0 AND 4611686018427387904
            THEN bytes
                + CASE WHEN typeof(NEW.size) = 'integer' AND NEW.size BETWEEN 0 AND 2147483647 THEN NEW.size ELSE 0 END
                - CASE WHEN typeof(OLD.size) = 'integer' AND OLD.size BETWEEN 0 AND 2147483647 THEN OLD.size ELSE 0 END
            ELSE -1 END
    WHERE id = 0;
END;
