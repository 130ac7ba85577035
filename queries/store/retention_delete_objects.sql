-- Objects nothing refers to any more: no stored Event, no version, no edge;
-- of cluster :cluster (NULL: all).
DELETE FROM objects
WHERE (:cluster IS NULL OR cluster_id = :cluster)
  AND id NOT IN (SELECT object_id FROM events UNION SELECT related_id FROM events WHERE related_id IS NOT NULL)
  AND id NOT IN (SELECT object_id FROM versions)
  AND id NOT IN (SELECT child_id FROM relations)
  AND id NOT IN (SELECT object_id FROM spec_docs)
