-- Objects of one type that the recording believes still exist: in one
-- namespace, or (:namespace NULL) cluster-wide.
SELECT o.id, o.uid
FROM objects o
WHERE o.cluster_id = :cluster AND o.kind = :kind AND o.api_version = :api_version
  AND (:namespace IS NULL OR o.namespace = :namespace)
  AND o.first_seen IS NOT NULL AND o.deleted IS NULL
