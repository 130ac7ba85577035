-- Update counters of minutes before the cutoff, of cluster :cluster (NULL: all).
DELETE FROM update_counts
WHERE minute < :cutoff / 60000
  AND (:cluster IS NULL OR object_id IN (SELECT id FROM objects WHERE cluster_id = :cluster))
