-- Calendar events. `date` is a real calendar date as YYYY-MM-DD text. date(d, '+0 days')
-- normalises 2026-02-30 to 2026-03-02 (without a modifier SQLite 3.40 returns it unchanged),
-- so the CHECK refuses any date that does not exist, whoever writes the row.
CREATE TABLE events (
    id    TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 200),
    title TEXT NOT NULL,
    date  TEXT NOT NULL CHECK (date IS date(date, '+0 days')),
    notes TEXT
);

-- "Events on a date", "events in a month" and "dates of a month with counts" are range scans
-- on this index; the last one is answered from the index alone (covering).
CREATE INDEX events_by_date ON events (date, id);
