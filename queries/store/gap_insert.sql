INSERT INTO gaps (cluster_id, resource, start, finish, reason, detail)
VALUES (:cluster, :resource, :start, :finish, :reason, :detail)
