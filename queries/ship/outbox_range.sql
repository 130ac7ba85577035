-- The next batch: the first and last outbox seq of the :limit keys after the
-- destination's cursor (NULLs: nothing newer).
SELECT min(seq), max(seq)
FROM (SELECT seq FROM outbox WHERE seq > :after ORDER BY seq LIMIT :limit)
