-- Edges of objects that were deleted before the cutoff, of cluster :cluster (NULL: all).
DELETE FROM relations
WHERE child_id IN (SELECT id FROM objects
                   WHERE deleted < :cutoff AND (:cluster IS NULL OR cluster_id = :cluster))
