SELECT id FROM objects
WHERE cluster_id = :cluster AND kind = :kind AND namespace = :namespace AND name = :name AND uid = :uid
