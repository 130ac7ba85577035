-- Every recorded object of one kind in one namespace (every incarnation),
-- for a timeline's selectors: the Services and budgets that may have
-- selected its Pods.
SELECT o.id AS id, av.s AS api_version, k.s AS kind, ns.s AS namespace, n.s AS name, o.uid AS uid,
       o.created AS created, o.first_seen AS first_seen, o.deleted AS deleted,
       o.deleted_after AS deleted_after
FROM strings k
JOIN strings ns ON ns.h = :nsh AND ns.s = :namespace
JOIN objects o ON o.cluster_id = :cluster AND o.kind = k.id AND o.namespace = ns.id
JOIN strings n ON n.id = o.name
JOIN strings av ON av.id = o.api_version
WHERE k.h = :kh AND k.s = :kind
ORDER BY n.s, coalesce(o.created, o.first_seen, 0) DESC, o.id DESC
