-- (event, count) identifies an occurrence: storing it twice is a no-op.
INSERT OR IGNORE INTO occurrences (event_id, count, n, first, last, message)
VALUES (:event, :count, :n, :first, :last, :message)
