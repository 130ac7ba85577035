INSERT INTO watch_positions (cluster_id, resource, resource_version, updated)
VALUES (:cluster, :resource, :rv, :now)
ON CONFLICT (cluster_id, resource) DO UPDATE SET resource_version = excluded.resource_version,
                                                 updated = excluded.updated
