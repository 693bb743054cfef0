-- The reminders table: one row per reminder, keyed by its id. `due` is YYYY-MM-DD (it sorts as
-- dates do), `done` 0 or 1.
CREATE TABLE reminders (
    id    TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 200),
    title TEXT NOT NULL CHECK (title <> ''),
    due   TEXT NOT NULL,
    done  INTEGER NOT NULL CHECK (done IN (0, 1))
) STRICT;
CREATE INDEX reminders_by_due ON reminders (due, id);
