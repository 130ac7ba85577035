-- Recorded clusters, matched by uid or label (:cluster NULL: all of them).
SELECT id, uid, label FROM clusters
WHERE :cluster IS NULL OR uid = :cluster OR label = :cluster
ORDER BY id
