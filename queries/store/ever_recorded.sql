-- Whether a recorder (not an import) ever wrote the cluster.
SELECT EXISTS (SELECT 1 FROM recorder_sessions WHERE cluster_id = :cluster AND mode IN ('watch', 'once'))
