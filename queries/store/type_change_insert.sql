INSERT INTO type_changes (cluster_id, at, resource, api_version, kind, change)
VALUES (:cluster, :at, :resource, :api_version, :kind, :change)
