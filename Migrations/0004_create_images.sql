-- Cached image bytes by URL, evicted least-recently-used beyond a byte budget.
CREATE TABLE images (
    url            TEXT PRIMARY KEY NOT NULL,
    data           BLOB NOT NULL,
    content_type   TEXT,
    size           INTEGER NOT NULL CHECK (size >= 0),
    stored_at      INTEGER NOT NULL, -- milliseconds since 1970-01-01T00:00:00Z
    last_access_at INTEGER NOT NULL  -- milliseconds since 1970-01-01T00:00:00Z
);

-- Eviction walks from the least recently used entry; with `size` in it, the byte total is
-- read from this index alone, without touching the rows and their blobs.
CREATE INDEX images_by_last_access ON images (last_access_at, url, size);
