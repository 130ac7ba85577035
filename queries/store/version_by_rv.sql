-- The version of an object (by uid) stored at one resourceVersion, with its writers' text.
SELECT v.id, w.s
FROM objects o
JOIN versions v ON v.object_id = o.id AND v.resource_version = :rv
JOIN strings w ON w.id = v.writers
-- NB: `+` keeps the planner off objects_by_name (cluster_id first), which
-- scanned every object of the cluster for each lookup.
WHERE o.uid = :uid AND +o.cluster_id = :cluster
LIMIT 1
