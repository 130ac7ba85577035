-- The shipper's own tables, in the connection's temporary schema (never in the file):
-- the keys of one batch, deduplicated.
CREATE TEMP TABLE IF NOT EXISTS ship_keys (
    tbl  INTEGER NOT NULL,
    a    INTEGER NOT NULL,
    b    INTEGER NOT NULL,
    PRIMARY KEY (tbl, a, b)
) WITHOUT ROWID;
