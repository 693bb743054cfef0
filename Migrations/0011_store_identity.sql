-- A random identity per store, written once. A published folder's manifest names the store it was
-- published from: publishing another store into the same folder starts a new generation instead of
-- appending segments computed against a change log that is not this folder's.
CREATE TABLE store_identity (
    id TEXT NOT NULL
);
INSERT INTO store_identity (id) VALUES (lower(hex(randomblob(16))));
