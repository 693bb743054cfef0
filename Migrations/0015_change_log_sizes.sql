-- Each logged transaction's size in bytes (its `changes` text), stored before the text, so that
-- the log can be pruned by size reading only the start of each row: a column after the text
-- would lie past its overflow pages. The log keeps the last 10,000 transactions and, of those,
-- no more than a total size (ChangeLogTable.retainedBytes): syncs that changed 200,000 records
-- each logged about 2.8 MB a transaction, and 10,000 of them 28 GB.
CREATE TABLE change_log_sized (
    tx           INTEGER PRIMARY KEY, -- increases with every logged transaction
    committed_at TEXT NOT NULL,       -- RFC 3339, UTC
    size         INTEGER NOT NULL DEFAULT 0, -- bytes of `changes` (0: written by other code)
    changes      TEXT NOT NULL        -- JSON array of {kind, key, operation, dates}
);
INSERT INTO change_log_sized (tx, committed_at, size, changes)
    SELECT tx, committed_at, length(CAST(changes AS BLOB)), changes FROM change_log ORDER BY tx;
DROP TABLE change_log;
ALTER TABLE change_log_sized RENAME TO change_log;
