-- How the recorder watched Pods: 1 cluster-wide, 0 in some namespaces only
-- (`record -n`), NULL never. Watch keys are `pods` or `pods/NAMESPACE`.
SELECT max(resource = 'pods')
FROM watch_positions
WHERE cluster_id = :cluster AND (resource = 'pods' OR resource LIKE 'pods/%')
