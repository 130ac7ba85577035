-- Age retention of object history: versions older than the cutoff, except
-- each object's latest (the state a live object is still in); all of an
-- object deleted before the cutoff. Of cluster :cluster (NULL: all).
DELETE FROM versions
WHERE at < :cutoff
  AND (:cluster IS NULL OR object_id IN (SELECT id FROM objects WHERE cluster_id = :cluster))
  AND (id NOT IN (SELECT max(id) FROM versions GROUP BY object_id)
       OR object_id IN (SELECT id FROM objects WHERE deleted < :cutoff))
