-- Every incarnation of kind/namespace/name recorded in one cluster (deleted
-- ones included), by the strings' ids; newest first.
SELECT o.id AS id
FROM objects o
WHERE o.cluster_id = :cluster AND o.kind = :kind AND o.namespace = :namespace AND o.name = :name
ORDER BY coalesce(o.created, o.first_seen, 0) DESC, o.id DESC
