-- Orders and their items. Money is exact: prices are integer minor units (cents),
-- never binary floating point, so 0.10 + 0.20 totals exactly 0.30.
CREATE TABLE orders (
    id        TEXT PRIMARY KEY NOT NULL CHECK (length(id) BETWEEN 1 AND 200),
    placed_at INTEGER NOT NULL -- milliseconds since 1970-01-01T00:00:00Z
);

CREATE TABLE order_items (
    order_id    TEXT NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
    position    INTEGER NOT NULL CHECK (position >= 0),
    item_name   TEXT NOT NULL,
    price_cents INTEGER NOT NULL CHECK (price_cents >= 0),
    aisle       INTEGER NOT NULL CHECK (aisle >= 0),
    quantity    INTEGER NOT NULL DEFAULT 1 CHECK (quantity >= 1),
    PRIMARY KEY (order_id, position)
) WITHOUT ROWID;
