-- The highest Event id stored when an import of one file begins: an Event with
-- a higher id was stored by that file (its transaction holds the write lock).
SELECT coalesce(max(id), 0) FROM events
