SELECT c.uid, t.at, t.resource, t.api_version, t.kind, t.change, 0
FROM temp.ship_keys k JOIN type_changes t ON t.id = k.a JOIN clusters c ON c.id = t.cluster_id
WHERE k.tbl = 11
