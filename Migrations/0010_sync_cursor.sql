-- Incremental sync from a published feed (feed format version 2): per source, the generation and
-- sequence number the store has applied. Written in the same transaction as the records, so the
-- cursor never runs ahead of (or behind) what the store holds. NULL for version-1 sources.
ALTER TABLE sync_sources ADD COLUMN cursor_generation TEXT;
ALTER TABLE sync_sources ADD COLUMN cursor_sequence INTEGER;
