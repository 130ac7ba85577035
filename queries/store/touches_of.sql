-- Touches in a window, oldest first: all of a cluster's (:names NULL), or
-- those of the objects named in the JSON array :names (matched on the name;
-- the caller matches kind and namespace).
SELECT at, verb, user, api_group, resource, subresource, namespace, name, code, detail, why
FROM touches
WHERE cluster_id = :cluster AND at BETWEEN :since AND :until
  AND (:names IS NULL OR name IN (SELECT value FROM json_each(:names)))
  AND (:namespace IS NULL OR namespace = :namespace)
ORDER BY at, id
