-- Age retention: occurrences last seen before the cutoff, of cluster :cluster
-- (NULL: of every cluster in the file).
DELETE FROM occurrences
WHERE last < :cutoff
  AND (:cluster IS NULL OR event_id IN (SELECT id FROM events WHERE cluster_id = :cluster))
