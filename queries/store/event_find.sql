-- The stored state of one Event object.
SELECT id, count, last FROM events WHERE uid = :uid AND cluster_id = :cluster
