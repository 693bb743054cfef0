-- One row per committed write transaction that changed records, written inside that same
-- transaction (so a rolled-back write leaves no trace). Observers in this process and in
-- other processes on the same file read it to learn what changed: kinds, keys, operations and,
-- for events, the dates touched. Old rows are pruned by the writer.
CREATE TABLE change_log (
    tx           INTEGER PRIMARY KEY, -- increases with every logged transaction
    committed_at TEXT NOT NULL,       -- RFC 3339, UTC
    changes      TEXT NOT NULL        -- JSON array of {kind, key, operation, dates}
);
