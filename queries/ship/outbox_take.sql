-- The next batch: outbox keys after the destination's cursor, oldest first.
SELECT seq, tbl, a, b FROM outbox WHERE seq > :after ORDER BY seq LIMIT :limit
