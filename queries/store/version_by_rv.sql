-- The version of an object (by uid) stored at one resourceVersion, with its writers' text.
SELECT v.id, w.s
FROM objects o
JOIN versions v ON v.object_id = o.id AND v.resource_version = :rv
JOIN strings w ON w.id = v.writers
WHERE o.cluster_id = :cluster AND o.uid = :uid
LIMIT 1
