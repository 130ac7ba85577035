-- The time below which the oldest :fraction of occurrences of cluster :cluster
-- (NULL: of all clusters) lie (size retention).
SELECT last FROM occurrences
WHERE :cluster IS NULL OR event_id IN (SELECT id FROM events WHERE cluster_id = :cluster)
ORDER BY last
LIMIT 1 OFFSET (
    SELECT CAST(COUNT(*) * :fraction AS INTEGER) FROM occurrences
    WHERE :cluster IS NULL OR event_id IN (SELECT id FROM events WHERE cluster_id = :cluster)
)
