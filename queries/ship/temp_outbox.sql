-- `kubectl diag ship`: an outbox of its own, in the temporary schema, so that
-- the recording is only read. Unqualified `outbox` names this table while it exists.
CREATE TEMP TABLE IF NOT EXISTS outbox (
    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
    tbl  INTEGER NOT NULL,
    a    INTEGER NOT NULL,
    b    INTEGER NOT NULL
);
