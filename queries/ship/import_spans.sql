SELECT c.uid, s.source, s.start, s.finish, 0
FROM temp.ship_keys k JOIN import_spans s ON s.id = k.a JOIN clusters c ON c.id = s.cluster_id
WHERE k.tbl = 13
