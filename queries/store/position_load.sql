SELECT resource_version FROM watch_positions WHERE cluster_id = :cluster AND resource = :resource
