-- What sync remembers per source: HTTP validators for conditional requests, what it last
-- received of each record (for the three-way policy and for tombstones), and a history.

CREATE TABLE sync_sources (
    source         TEXT PRIMARY KEY NOT NULL, -- a feed URL, or a file's absolute path
    etag           TEXT,                      -- sent back as If-None-Match
    last_modified  TEXT,                      -- sent back as If-Modified-Since
    last_synced_at TEXT                       -- RFC 3339, UTC
);

-- The hash of each record as last received from a source. A local record whose current hash
-- differs from it was changed locally since that sync.
CREATE TABLE sync_records (
    source TEXT NOT NULL REFERENCES sync_sources(source) ON DELETE CASCADE,
    kind   TEXT NOT NULL CHECK (kind IN ('framework', 'order', 'event', 'image')),
    key    TEXT NOT NULL,
    hash   INTEGER NOT NULL, -- 64-bit FNV-1a of the record's canonical JSON
    PRIMARY KEY (source, kind, key)
) WITHOUT ROWID;

CREATE TABLE sync_history (
    id          INTEGER PRIMARY KEY,
    source      TEXT NOT NULL,
    started_at  TEXT NOT NULL, -- RFC 3339, UTC
    finished_at TEXT NOT NULL,
    policy      TEXT NOT NULL,
    outcome     TEXT NOT NULL CHECK (outcome IN ('applied', 'up-to-date', 'failed', 'applied-with-image-failures')),
    report      TEXT,          -- the JSON report (counts), when there is one
    error       TEXT           -- what went wrong, when it failed
);
