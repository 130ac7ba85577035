SELECT id FROM objects WHERE uid = :uid AND cluster_id = :cluster ORDER BY first_seen IS NULL, id
