-- Refused writes in a window, newest last: all of a cluster's, or one object's
-- (:resource empty for all).
SELECT at, verb, user, api_group, resource, subresource, namespace, name, code, reason, message, refused_by
FROM refusals
WHERE cluster_id = :cluster AND at BETWEEN :since AND :until
  AND (:resource = '' OR (resource = :resource AND namespace = :namespace AND name = :name))
ORDER BY at
