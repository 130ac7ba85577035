UPDATE events SET deleted = :at
WHERE name = :name AND namespace = :namespace AND cluster_id = :cluster AND uid = :uid
  AND deleted IS NULL
