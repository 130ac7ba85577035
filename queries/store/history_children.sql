-- Objects that point at a parent: owned by it (by uid), or (Pod -> Node,
-- Pod -> PVC) naming it.
SELECT DISTINCT r.child_id AS child_id, r.rel AS rel
FROM relations r
JOIN objects c ON c.id = r.child_id
WHERE r.parent_name = :name AND r.parent_kind = :kind AND r.parent_namespace = :namespace
  AND (r.parent_uid = :uid OR r.parent_uid = '')
  AND c.cluster_id = :cluster
