-- The record kinds the last sync of each source applied (their names, sorted, comma-separated),
-- as the program that ran it registered them. A program that registers other kinds (storectl on
-- an app's store, or the app after an update that adds a kind) must read the whole feed again:
-- the cursor and the validators the last sync left say nothing of the records it skipped.
-- NULL for a source last synced before this migration: its next sync reads the whole feed once.
ALTER TABLE sync_sources ADD COLUMN kinds TEXT;
