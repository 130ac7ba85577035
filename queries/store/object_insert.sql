INSERT INTO objects (cluster_id, kind, namespace, name, uid, api_version)
VALUES (:cluster, :kind, :namespace, :name, :uid, :api_version)
