-- Event occurrences of one cluster in the recording, every session's (the
-- recorder's recording-wide gauge; read at start and after retention).
SELECT COALESCE(SUM(o.n), 0)
FROM events AS e
JOIN occurrences AS o ON o.event_id = e.id
WHERE e.cluster_id = :cluster
