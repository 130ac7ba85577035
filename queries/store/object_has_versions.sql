-- Whether any version of an object (by uid) is stored.
SELECT EXISTS (
    SELECT 1 FROM objects o JOIN versions v ON v.object_id = o.id
    WHERE o.cluster_id = :cluster AND o.uid = :uid)
