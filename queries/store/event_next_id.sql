-- The id the next new Event gets, as SQLite itself would pick it. Read once per
-- batch, under the write lock; the writer counts on from there.
SELECT COALESCE(MAX(id), 0) + 1 FROM events
