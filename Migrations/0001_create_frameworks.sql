-- Frameworks: the Apple framework list and anything shaped like it (see FEED.md).
CREATE TABLE frameworks (
    id          TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 200),
    name        TEXT NOT NULL,
    image_name  TEXT NOT NULL,
    url_string  TEXT NOT NULL,
    description TEXT NOT NULL
);
