SELECT c.uid, w.resource, w.updated, w.updated
FROM temp.ship_keys k
JOIN watch_positions w ON w.cluster_id = k.a
JOIN clusters c ON c.id = w.cluster_id
WHERE k.tbl = 14
