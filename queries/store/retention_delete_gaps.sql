-- Gaps that ended before the cutoff, of cluster :cluster (NULL: all).
DELETE FROM gaps WHERE finish < :cutoff AND (:cluster IS NULL OR cluster_id = :cluster)
