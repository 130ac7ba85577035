-- Forgets where the watches of one type were (cluster-wide and per
-- namespace, `plural.group/namespace`): a type that is removed and later
-- created again starts from a fresh list.
DELETE FROM watch_positions
WHERE cluster_id = :cluster
  AND (resource = :resource OR substr(resource, 1, length(:resource) + 1) = :resource || '/')
