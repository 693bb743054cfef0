-- The record kinds the last sync of each source applied (their names, sorted, comma-separated),
-- as the program that ran it registered them. A program that registers other kinds (storectl on
-- an app's store, or the app after an update that adds a kind) must read the whole feed again:
-- the cursor and the validators the last sync left say nothing of the records it skipped.
-- NULL for a source last synced before this migration: its next sync reads the whole feed once.
ALTER TABLE sync_sources ADD COLUMN kinds TEXT;

-- Set when a sync was served an older manifest than the cursor (same generation, a head behind
-- it) and refused it: a stale cache, or a folder restored from a backup, whose later sequence
-- numbers may name other changes than the ones this store applied. The next sync that can go
-- on from the cursor reads the snapshot instead; any sync that sets the cursor clears it.
ALTER TABLE sync_sources ADD COLUMN cursor_suspect INTEGER NOT NULL DEFAULT 0;
