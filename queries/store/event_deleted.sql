UPDATE events SET deleted = :at WHERE uid = :uid AND cluster_id = :cluster AND deleted IS NULL
