-- Events left with no occurrence after retention, of cluster :cluster (NULL: all).
DELETE FROM events
WHERE last < :cutoff AND (:cluster IS NULL OR cluster_id = :cluster)
  AND NOT EXISTS (SELECT 1 FROM occurrences o WHERE o.event_id = events.id)
