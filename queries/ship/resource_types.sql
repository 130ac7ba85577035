SELECT c.uid, t.api_version, t.plural, t.kind, t.singular, t.short_names, t.namespaced, 0
FROM temp.ship_keys k
JOIN resource_types t ON t.cluster_id = k.a
JOIN clusters c ON c.id = t.cluster_id
WHERE k.tbl = 10
