-- Recorded names of one kind in one namespace, for "did you mean" errors.
SELECT DISTINCT n.s
FROM objects o
JOIN strings n ON n.id = o.name
JOIN strings k ON k.id = o.kind
JOIN strings ns ON ns.id = o.namespace
WHERE o.cluster_id = :cluster AND k.s = :kind AND ns.s = :namespace
ORDER BY n.s
LIMIT 20
