-- Clusters an import under :cluster would be mixed up with: those whose uid or
-- label is :cluster, with whether a recorder (not an import) made them. An
-- import's own cluster has uid = label = its --cluster and no session.
SELECT c.uid, c.label,
       EXISTS (SELECT 1 FROM recorder_sessions s WHERE s.cluster_id = c.id) OR c.uid <> :cluster
FROM clusters c
WHERE c.uid = :cluster OR c.label = :cluster
ORDER BY c.id
