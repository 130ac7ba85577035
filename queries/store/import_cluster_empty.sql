-- Whether the cluster holds nothing yet (no object, hence no Event): an import
-- of text into it need look up only what its own rows stored (objects_by_name
-- starts with cluster_id).
SELECT NOT EXISTS (SELECT 1 FROM objects WHERE cluster_id = :cluster)
