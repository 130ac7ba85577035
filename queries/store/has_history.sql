-- Whether the recorder kept object history for this cluster (not Events only).
SELECT EXISTS (SELECT 1 FROM objects WHERE cluster_id = :cluster AND first_seen IS NOT NULL)
