-- Whether any version of an object (by uid) is stored.
SELECT EXISTS (
    SELECT 1 FROM objects o JOIN versions v ON v.object_id = o.id
    WHERE o.uid = :uid AND +o.cluster_id = :cluster)  -- NB: `+`: by objects_by_uid, not a scan of the cluster
