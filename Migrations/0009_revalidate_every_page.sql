-- Sync remembers validators per page, and the policy of the last sync, per source.
--
-- Only the first page's ETag and Last-Modified were kept, and a 304 for it ended the sync as
-- up to date: a record added to a later page of a paged feed never arrived. Now every page is
-- revalidated with its own validators, kept here in order. The first page's old validators are
-- not carried over (alone they would answer the same wrong 304): the next sync of each source
-- fetches every page once, and remembers them all.
--
-- The policy is remembered so that a sync with another policy fetches the feed again instead of
-- stopping at a 304: the records must be reconciled under the new policy.
CREATE TABLE sync_pages (
    source_id     INTEGER NOT NULL REFERENCES sync_sources(id) ON DELETE CASCADE,
    number        INTEGER NOT NULL, -- 1 for the first page, then each `next` in turn
    url           TEXT NOT NULL,    -- the URL requested, never with credentials
    etag          TEXT,             -- sent back as If-None-Match
    last_modified TEXT,             -- sent back as If-Modified-Since
    PRIMARY KEY (source_id, number)
) WITHOUT ROWID;

ALTER TABLE sync_sources DROP COLUMN etag;
ALTER TABLE sync_sources DROP COLUMN last_modified;
ALTER TABLE sync_sources ADD COLUMN policy TEXT; -- of the last sync (not a dry run); NULL before 0009
