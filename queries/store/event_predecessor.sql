-- An Event re-created after a 404 keeps its name and count but gets a new uid:
-- the latest earlier Event of the same name about the same object and reason.
SELECT count, last FROM events
WHERE object_id = :object AND namespace = :namespace AND name = :name AND reason = :reason
  AND cluster_id = :cluster AND uid <> :uid
ORDER BY last DESC
LIMIT 1
