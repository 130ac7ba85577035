-- Whether audit logs were imported into the cluster.
SELECT EXISTS (SELECT 1 FROM import_spans WHERE cluster_id = :cluster)
